"""On demand (application mode), the ResourceManager releases a worker that has been idle for
``resourcemanager.taskmanager-timeout``: a real ResourceManager starting real TaskExecutor processes."""

from __future__ import annotations

import asyncio

import psutil

from flott.configuration import Configuration
from flott.runtime.resourcemanager.resource_manager import ResourceManager
from flott.runtime.rpc.service import RpcService


async def test_an_idle_worker_started_on_demand_is_released_and_a_later_request_starts_another() -> None:
    config = Configuration(
        {
            "resourcemanager.taskmanager-timeout": "1500",
            "heartbeat.interval": "500",
            "heartbeat.timeout": "5000",
        }
    )
    rpc = RpcService()
    await rpc.start()
    rm = ResourceManager(rpc, config)
    await rm.start()
    driver = rm.enable_workers_on_demand()
    pids: list[int] = []
    try:
        # A request from a JobMaster that is not there: the worker's offer fails, its slot is
        # freed, and from then on the worker is idle.
        await rm.request_slots("job-1", "127.0.0.1:1", "jobmaster-job-1", "token", 1)
        assert len(driver.processes) == 1
        pids = [p.pid for p in driver.processes.values()]
        await rm.wait_for_task_executors(1, timeout=60)
        (first,) = rm.task_executors
        async with asyncio.timeout(60):
            while first in rm.task_executors or driver.processes:
                await asyncio.sleep(0.1)
        assert not psutil.pid_exists(pids[0]) or psutil.Process(pids[0]).status() == psutil.STATUS_ZOMBIE
        # released, not crashed: nothing replaces it until slots are asked for again
        await asyncio.sleep(1.0)
        assert driver.processes == {}
        await rm.request_slots("job-2", "127.0.0.1:1", "jobmaster-job-2", "token", 1)
        assert len(driver.processes) == 1
        pids += [p.pid for p in driver.processes.values()]
    finally:
        await rm.stop()
        await rpc.stop()
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
