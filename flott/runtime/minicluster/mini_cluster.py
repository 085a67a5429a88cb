"""The embedded cluster: JobManager components in this process, TaskExecutors as child processes.

Used by scripts that call ``env.execute()`` outside any launcher, by
``flott run`` without ``-m``, and by tests. The parts are the real ones
(Dispatcher, ResourceManager, JobMasters over RPC; TaskExecutor processes
exchanging data over TCP), only wired in one place.
"""

from __future__ import annotations

import contextlib
import os

from flott.configuration import Configuration
from flott.runtime.blob.blob_server import BlobServer
from flott.runtime.dispatcher.dispatcher import Dispatcher
from flott.runtime.gateways.dispatcher_gateway import DISPATCHER_ENDPOINT, DispatcherGateway
from flott.runtime.gateways.resource_manager_gateway import RESOURCE_MANAGER_ENDPOINT, ResourceManagerGateway
from flott.runtime.jobgraph import new_id
from flott.runtime.metrics.reporter_setup import reporters_from_config
from flott.runtime.resourcemanager.resource_manager import ResourceManager
from flott.runtime.rpc.service import RpcService
from flott.ssl_context import internal_ssl


class MiniCluster:
    def __init__(self, config: Configuration | None = None, num_task_managers: int | None = None) -> None:
        self.config = config or Configuration()
        if not self.config.contains("flott.job-logs.dir"):
            # the jobs' output is on the console of the program running them: no job logs on disk
            self.config = self.config.with_overrides({"flott.job-logs.dir": "none"})
        n = num_task_managers or self.config.get_int("local.number-taskmanager")
        self.num_task_managers = n if n > 0 else (os.cpu_count() or 1)
        self.rpc = RpcService(
            bind_host=self.config.get("jobmanager.bind-host"),
            port=0,
            advertised_host=self.config.get("jobmanager.rpc.address"),
            default_timeout=self.config.get_seconds("pekko.ask.timeout"),
            tls=internal_ssl(self.config),
        )
        self.resource_manager: ResourceManager | None = None
        self.dispatcher: Dispatcher | None = None
        self.blob_server: BlobServer | None = None

    async def start(self, wait_for_task_executors: bool = True) -> None:
        # A metric reporter flott cannot honour is refused before any process starts.
        reporters_from_config(self.config, self.config.get("jobmanager.bind-host"))
        await self.rpc.start()
        rm = self.resource_manager = ResourceManager(self.rpc, self.config)
        await rm.start()
        driver = rm.enable_local_processes()
        for _ in range(self.num_task_managers):
            driver.start_task_executor(new_id())
        rm_gateway = self.rpc.connect(self.rpc.address, RESOURCE_MANAGER_ENDPOINT, ResourceManagerGateway)
        blob_server = self.blob_server = BlobServer(self.config)
        await blob_server.start()
        self.dispatcher = Dispatcher(self.rpc, self.config, rm_gateway, blob_server=blob_server)
        await self.dispatcher.start()
        if wait_for_task_executors:
            await rm.wait_for_task_executors(self.num_task_managers, timeout=60.0)

    def dispatcher_gateway(self) -> DispatcherGateway:
        return self.rpc.connect(self.rpc.address, DISPATCHER_ENDPOINT, DispatcherGateway)

    def task_executor_pids(self) -> list[int]:
        if self.resource_manager is None or self.resource_manager.driver is None:
            return []
        return [p.pid for p in self.resource_manager.driver.processes.values()]

    async def close(self) -> None:
        if self.dispatcher is not None:
            with contextlib.suppress(Exception):
                await self.dispatcher.stop()
        if self.blob_server is not None:
            with contextlib.suppress(Exception):
                await self.blob_server.close()
        if self.resource_manager is not None:
            await self.resource_manager.stop()
        await self.rpc.stop()

    async def __aenter__(self) -> MiniCluster:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
