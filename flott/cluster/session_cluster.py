"""The JobManager process of a session cluster (Flink: StandaloneSessionClusterEntrypoint).

One RPC service hosts the ResourceManager and the Dispatcher (and the JobMasters
the Dispatcher starts); the REST endpoint serves Flink's API in front of the
Dispatcher; the BlobServer (``blob.server.port``) serves the jobs' Python files
to the TaskExecutors. TaskExecutors either register on their own (standalone: ``flott
taskmanager start``) or, with ``local_task_managers > 0``, are started as child
processes by the ResourceManager's local driver (``flott cluster start``).

With ``high-availability.type: zookeeper`` the process is a leader contender instead
(:mod:`flott.cluster.ha_session_cluster`); ``none`` (the default) runs this one.
"""

from __future__ import annotations

import asyncio
import logging

from flott.configuration import Configuration
from flott.rest.webmonitor.rest_server_endpoint import RestServerEndpoint
from flott.runtime.blob.blob_server import BlobServer
from flott.runtime.dispatcher.dispatcher import Dispatcher
from flott.runtime.entrypoint.jobmanager_process import (
    jobmanager_rpc_service,
    set_on_termination_signals,
    stop_components,
)
from flott.runtime.gateways.dispatcher_gateway import DISPATCHER_ENDPOINT, DispatcherGateway
from flott.runtime.gateways.resource_manager_gateway import RESOURCE_MANAGER_ENDPOINT, ResourceManagerGateway
from flott.runtime.jobgraph import new_id
from flott.runtime.resourcemanager.resource_manager import ResourceManager

log = logging.getLogger(__name__)


class SessionClusterEntrypoint:
    def __init__(self, config: Configuration, local_task_managers: int = 0) -> None:
        self.config = config
        self.local_task_managers = local_task_managers
        self.rpc = jobmanager_rpc_service(config)
        self.resource_manager: ResourceManager | None = None
        self.dispatcher: Dispatcher | None = None
        self.blob_server: BlobServer | None = None
        self.rest: object | None = None
        self._shutdown = asyncio.Event()

    async def start(self) -> None:
        await self.rpc.start()
        rm = self.resource_manager = ResourceManager(self.rpc, self.config)
        await rm.start()
        if self.local_task_managers > 0:
            driver = rm.enable_local_processes()
            for _ in range(self.local_task_managers):
                driver.start_task_executor(new_id())
        rm_gateway = self.rpc.connect(self.rpc.address, RESOURCE_MANAGER_ENDPOINT, ResourceManagerGateway)
        blob_server = self.blob_server = BlobServer(self.config)
        await blob_server.start()
        self.dispatcher = Dispatcher(
            self.rpc, self.config, rm_gateway, on_shutdown=self._request_shutdown, blob_server=blob_server
        )
        await self.dispatcher.start()
        gateway = self.rpc.connect(self.rpc.address, DISPATCHER_ENDPOINT, DispatcherGateway)
        rest = RestServerEndpoint(self.config, gateway)
        self.rest = rest
        host, port = await rest.start()
        log.info(
            "JobManager RPC at %s, REST at http://%s:%d, BlobServer at %s",
            self.rpc.address, host, port, blob_server.address,
        )

    async def _request_shutdown(self) -> None:
        self._shutdown.set()

    async def run_until_shutdown(self) -> None:
        set_on_termination_signals(self._shutdown, self.config)
        await self._shutdown.wait()

    async def stop(self) -> None:
        await stop_components(self.rpc, self.rest, self.dispatcher, self.blob_server, self.resource_manager)


async def run_session_cluster(config: Configuration, local_task_managers: int = 0) -> None:
    if config.get("high-availability.type", "none").strip().lower() == "zookeeper":
        # imported here: the HA cluster loads kazoo, which a cluster without HA never needs
        from flott.cluster.ha_session_cluster import run_ha_session_cluster

        await run_ha_session_cluster(config, local_task_managers)
        return
    entrypoint = SessionClusterEntrypoint(config, local_task_managers)
    try:
        await entrypoint.start()
        await entrypoint.run_until_shutdown()
    finally:
        await entrypoint.stop()
