"""Entry point of a TaskExecutor process (Flink: TaskManagerRunner).

``python -m flott.runtime.taskexecutor --resource-manager HOST:PORT [-D key=value ...]``

With ``high-availability.type: zookeeper`` the ResourceManager is not taken from the
command line: the process follows the leader published in ZooKeeper, re-registers when
it changes, and drops the slots and tasks of a leader that lost its leadership.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import os
import re
import signal
import sys
import tempfile
from collections.abc import Mapping

from flott.configuration import Configuration, take_secrets_from_environment
from flott.runtime.entrypoint import event_loop
from flott.runtime.entrypoint.runtime_logging import configure_logging
from flott.runtime.highavailability import (
    RESOURCE_MANAGER,
    HighAvailabilityServices,
    LeaderRetrievalService,
    create_ha_services,
)
from flott.runtime.io.network.config import NetworkConfig
from flott.runtime.io.network.shuffle_environment import ShuffleEnvironment
from flott.runtime.jobgraph import new_id
from flott.runtime.rpc.service import RpcService
from flott.runtime.taskexecutor.task_executor import TaskExecutor
from flott.ssl_context import internal_ssl

GC_YOUNG_THRESHOLD = 50_000
"""Allocations of tracked objects between young collections in a TaskExecutor (CPython: 700)."""


def tune_garbage_collector() -> None:
    """Collect less often in a process that moves records: once, before the first task runs.

    Every record makes a few GC-tracked tuples that live for a whole batch, so at CPython's
    default threshold (700) the collector ran about once per batch, and each run traversed the
    batch: ~330-410 ms of GC per 2,000,000 records of the window benchmark (py-spy), a tenth of
    the job. The modules loaded so far are frozen (never scanned again) and the young
    generation may grow to :data:`GC_YOUNG_THRESHOLD` objects first; reference counting still
    frees acyclic garbage at once, so memory only grows by cyclic garbage awaiting a collection.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, 20, 20)


async def run_task_executor(config: Configuration, resource_manager_address: str, resource_id: str) -> None:
    loop = asyncio.get_running_loop()
    tls = internal_ssl(config)
    rpc = RpcService(
        bind_host=config.get("taskmanager.bind-host"),
        port=config.get_int("taskmanager.rpc.port"),
        advertised_host=config.get("taskmanager.host"),
        default_timeout=config.get_seconds("pekko.ask.timeout"),
        tls=tls,
    )
    await rpc.start()
    shuffle = ShuffleEnvironment(
        NetworkConfig(
            bind_host=config.get("taskmanager.bind-host"),
            advertised_host=config.get("taskmanager.host"),
            port=config.get_int("taskmanager.data.port"),
            spill_dir=_spill_dir(config.to_dict(), resource_id),
        ),
        loop=loop,
        tls=tls,
    )
    await shuffle.start()
    ha_mode = config.get("high-availability.type", "none").strip().lower() == "zookeeper"
    ha: HighAvailabilityServices | None = None
    retrieval: LeaderRetrievalService | None = None
    te = TaskExecutor(rpc, shuffle, config, resource_id, resource_manager_address, high_availability=ha_mode)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await te.start(shuffle.address)
        if ha_mode:
            if not config.get("high-availability.storageDir", ""):
                # a TaskExecutor only retrieves leaders: it stores nothing there
                config = config.with_overrides(
                    {"high-availability.storageDir": "memory://flott-taskexecutor"}
                )
            ha = await create_ha_services(config)
            retrieval = ha.get_leader_retrieval_service(RESOURCE_MANAGER)
            retrieval.start(_ResourceManagerListener(te))
        waiters = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(te.terminated.wait())]
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        for w in waiters:
            w.cancel()
    finally:
        if retrieval is not None:
            await retrieval.stop()
        await te.close()
        await shuffle.close()
        await rpc.stop()
        if ha is not None:
            await ha.close()


class _ResourceManagerListener:
    def __init__(self, te: TaskExecutor) -> None:
        self._te = te

    def notify_leader_address(self, address: str | None, session_id: str | None) -> None:
        self._te.notify_resource_manager_leader(address, session_id)

    def handle_error(self, error: BaseException) -> None:
        logging.getLogger(__name__).error("ResourceManager leader retrieval failed: %r", error)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="flott-taskexecutor")
    parser.add_argument("--resource-manager", required=True)
    parser.add_argument("--resource-id", default=None)
    parser.add_argument("-D", dest="dynamic", action="append", default=[])
    args = parser.parse_args(argv)
    # Secrets come from the environment, never the command line (LocalProcessDriver).
    config = Configuration({**Configuration.parse_dynamic(args.dynamic), **take_secrets_from_environment()})
    configure_logging(config, "taskexecutor", own_process=True)
    tune_garbage_collector()
    try:
        event_loop.run(run_task_executor(config, args.resource_manager, args.resource_id or new_id()))
    except KeyboardInterrupt:
        return 130
    except Exception as e:
        print(f"TaskExecutor failed: {e}", file=sys.stderr)
        return 1
    return 0


def _spill_dir(config: Mapping[str, str], resource_id: str) -> str:
    """Where this TaskExecutor's blocking partitions spill: under the first of ``io.tmp.dirs``
    (else the system's temporary directory), in a directory of its own."""
    dirs = [d for d in re.split(r"[,;:]", config.get("io.tmp.dirs", "")) if d.strip()]
    root = dirs[0].strip() if dirs else tempfile.gettempdir()
    return os.path.join(root, f"flott-blocking-{resource_id}")
