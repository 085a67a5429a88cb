"""The ResourceManager: TaskExecutor registration, heartbeats and slots.

TaskExecutors register and heartbeat with their slot report; JobMasters ask for
slots; the SlotManager decides, and the chosen TaskExecutor is told to offer the
slot to the JobMaster. With a driver (active mode) it also starts the
TaskExecutor processes; in standalone mode they are started by an operator.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flott.configuration import Configuration
from flott.errors import FlottError, TaskExecutorLostError
from flott.runtime.entrypoint.log_files import LogFileInfo
from flott.runtime.entrypoint.thread_dump import ThreadStack
from flott.runtime.gateways.job_master_gateway import JobMasterGateway
from flott.runtime.gateways.resource_manager_gateway import (
    RESOURCE_MANAGER_ENDPOINT,
    SlotCapacity,
    slot_capacity,
)
from flott.runtime.gateways.task_executor_gateway import TASK_EXECUTOR_ENDPOINT, TaskExecutorGateway
from flott.runtime.heartbeat.heartbeat_manager import check_period, watch_heartbeats
from flott.runtime.heartbeat.heartbeat_monitor import (
    HeartbeatMonitor,
    HeartbeatReceived,
    TargetRegistered,
    TargetTimedOut,
    TargetUnregistered,
)
from flott.runtime.jobgraph import new_id
from flott.runtime.messages.cluster import (
    RegistrationResponse,
    SlotReport,
    TaskExecutorInfo,
    TaskExecutorRegistration,
)
from flott.runtime.metrics.flame_graph import StackSample
from flott.runtime.metrics.query_service import MetricDump
from flott.runtime.resourcemanager.active_workers import (
    ActiveWorkers,
    ReleaseWorker,
    ReplacementRefused,
    StartWorker,
    Tick,
    WorkerExited,
    WorkerRegistered,
    WorkerStarted,
)
from flott.runtime.resourcemanager.local_process_driver import LocalProcessDriver
from flott.runtime.resourcemanager.slot_manager import Allocation, PendingRequest, SlotManager
from flott.runtime.rpc.service import RpcEndpoint, RpcService

log = logging.getLogger(__name__)

_MAX_REPLACEMENTS_PER_MINUTE = 10


@dataclass
class _Registered:
    registration: TaskExecutorRegistration
    gateway: TaskExecutorGateway
    registered_ms: int


class ResourceManager(RpcEndpoint):
    endpoint_id = RESOURCE_MANAGER_ENDPOINT

    def __init__(
        self, rpc: RpcService, config: Configuration, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._rpc = rpc
        self._config = config
        self._clock = clock
        self.resource_manager_id = new_id()
        self.slots = SlotManager()
        self.task_executors: dict[str, _Registered] = {}
        self.driver: LocalProcessDriver | None = None
        self._cluster_driver: LocalProcessDriver | None = None
        """TaskExecutors the cluster runs outside this ResourceManager (:meth:`count_task_executors_of`)."""
        self._heartbeat_interval = config.get_seconds("heartbeat.interval")
        self._heartbeat_timeout = config.get_seconds("heartbeat.timeout")
        self._heartbeats = HeartbeatMonitor(self._heartbeat_timeout)
        """The liveness of the registered TaskExecutors (pure; ticked by the shell)."""
        self._monitor: asyncio.Task[None] | None = None
        self._registered = asyncio.Condition()
        self._job_masters: dict[str, PendingRequest] = {}
        self._stopping = False
        self._workers = ActiveWorkers(_MAX_REPLACEMENTS_PER_MINUTE)
        """The worker processes the driver started (pure: replacements, and on demand releases)."""
        self._workers_on_demand = False
        self._worker_watch: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._rpc.register(self)
        self._monitor = asyncio.get_running_loop().create_task(
            watch_heartbeats(
                self._heartbeats,
                self._clock,
                check_period(self._heartbeat_interval, self._heartbeat_timeout),
                self._task_executor_timed_out,
            )
        )

    def enable_local_processes(self) -> LocalProcessDriver:
        self.driver = LocalProcessDriver(
            self._config, self._rpc.address, self._on_process_exit, on_start=self._worker_started
        )
        return self.driver

    def _worker_started(self, resource_id: str) -> None:
        self._workers.handle(WorkerStarted(resource_id), self._clock())

    async def stop(self, shutdown_task_executors: bool = True) -> None:
        """``shutdown_task_executors=False`` (HA: leadership lost) leaves the TaskExecutors running
        for the next leader."""
        self._stopping = True
        for watcher in (self._monitor, self._worker_watch):
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(BaseException):
                    await watcher
        for reg in list(self.task_executors.values()) if shutdown_task_executors else []:
            with contextlib.suppress(FlottError):
                await reg.gateway.shutdown(timeout=2.0)
        if self.driver is not None:
            await self.driver.stop_all()
        self._rpc.unregister(self.endpoint_id)

    async def wait_for_task_executors(self, count: int, timeout: float) -> None:
        async with asyncio.timeout(timeout), self._registered:
            await self._registered.wait_for(lambda: len(self.task_executors) >= count)

    # -- RPC -----------------------------------------------------------------------------------

    async def register_task_executor(self, registration: TaskExecutorRegistration) -> RegistrationResponse:
        rid = registration.resource_id
        if rid in self.task_executors:
            await self._lose(rid, "re-registered", notify=True)
        gw = self._rpc.connect(registration.rpc_address, TASK_EXECUTOR_ENDPOINT, TaskExecutorGateway)
        self.task_executors[rid] = _Registered(registration, gw, int(time.time() * 1000))
        self._heartbeats.handle(TargetRegistered(rid, f"TaskExecutor {rid}"), self._clock())
        self.slots.register(rid, registration.num_slots)
        self._workers.handle(WorkerRegistered(rid), self._clock())
        if registration.slot_report is not None:
            self._sync_slots(rid, registration.slot_report)
        log.info(
            "TaskExecutor %s registered from %s with %d slots",
            rid,
            registration.rpc_address,
            registration.num_slots,
        )
        async with self._registered:
            self._registered.notify_all()
        asyncio.get_running_loop().call_soon(self._allocate_soon)
        return RegistrationResponse(
            self.resource_manager_id,
            int(self._heartbeat_interval * 1000),
            int(self._heartbeat_timeout * 1000),
        )

    async def heartbeat_from_task_executor(self, resource_id: str, slot_report: SlotReport) -> None:
        """A heartbeat of a TaskExecutor this ResourceManager does not know (its heartbeat timed out
        while it was paused or cut off) is refused with TaskExecutorLostError: the TaskExecutor
        then registers again, as Flink's does when its ResourceManager connection is lost."""
        reg = self.task_executors.get(resource_id)
        if reg is None:
            raise TaskExecutorLostError(
                f"TaskExecutor {resource_id} is not registered with this ResourceManager (its heartbeat "
                "timed out, or it was never registered): register again"
            )
        self._heartbeats.handle(HeartbeatReceived(resource_id), self._clock())
        self._sync_slots(resource_id, slot_report)

    def _sync_slots(self, resource_id: str, slot_report: SlotReport) -> None:
        self.slots.sync_report(
            resource_id,
            {s.slot_index: (s.allocation_id, s.job_id or "") for s in slot_report.slots if s.allocation_id},
        )

    async def request_slots(
        self,
        job_id: str,
        job_master_address: str,
        job_master_endpoint: str,
        job_master_token: str,
        count: int,
    ) -> None:
        req = PendingRequest(job_id, job_master_address, job_master_endpoint, job_master_token, count)
        self._job_masters[job_id] = req
        self.slots.request(req)
        self._allocate_soon()
        self._start_workers_on_demand()

    async def cancel_slot_request(self, job_id: str) -> None:
        self.slots.cancel(job_id)
        self._job_masters.pop(job_id, None)

    async def notify_slot_available(self, resource_id: str, slot_index: int, allocation_id: str) -> None:
        if self.slots.free(resource_id, slot_index, allocation_id):
            self._allocate_soon()

    async def request_task_executor_infos(self) -> list[TaskExecutorInfo]:
        out = []
        now = self._clock()
        wall = time.time()
        for rid, reg in self.task_executors.items():
            te = self.slots.task_executors.get(rid)
            r = reg.registration
            last_heartbeat = self._heartbeats.last_heartbeat(rid)
            last = now if last_heartbeat is None else last_heartbeat
            out.append(
                TaskExecutorInfo(
                    resource_id=rid,
                    rpc_address=r.rpc_address,
                    data_address=r.data_address,
                    num_slots=r.num_slots,
                    free_slots=len(te.free_indices()) if te else 0,
                    last_heartbeat_ms=int((wall - (now - last)) * 1000),
                    registered_ms=reg.registered_ms,
                    pid=r.pid,
                    hostname=r.hostname,
                    memory_bytes=r.memory_bytes,
                    cpu_cores=r.cpu_cores,
                )
            )
        return out

    def _gateway_of(self, resource_id: str) -> TaskExecutorGateway:
        reg = self.task_executors.get(resource_id)
        if reg is None:
            raise TaskExecutorLostError(
                f"TaskExecutor {resource_id} is not registered with the ResourceManager."
            )
        return reg.gateway

    async def request_task_manager_log_list(self, resource_id: str) -> list[LogFileInfo]:
        """The files of a TaskExecutor's log directory (Flink: requestTaskManagerLogList)."""
        return await self._gateway_of(resource_id).request_log_list()

    async def request_task_manager_log_file(
        self, resource_id: str, kind: str, name: str, max_bytes: int
    ) -> bytes:
        """The last ``max_bytes`` of a TaskExecutor's log file, main log or stdout."""
        return await self._gateway_of(resource_id).request_log_file(kind, name, max_bytes)

    async def request_task_manager_thread_dump(self, resource_id: str) -> list[ThreadStack]:
        return await self._gateway_of(resource_id).request_thread_dump()

    async def request_task_manager_thread_samples(
        self, resource_id: str, job_id: str, vertex_id: str, subtasks: list[int],
        num_samples: int, delay_ms: int, max_depth: int,
    ) -> list[StackSample]:
        budget = num_samples * delay_ms / 1000.0 + 10.0
        return await self._gateway_of(resource_id).request_thread_samples(
            job_id, vertex_id, subtasks, num_samples, delay_ms, max_depth, timeout=budget
        )

    async def request_task_manager_metric_dumps(self, timeout_s: float) -> dict[str, MetricDump]:
        """Every registered TaskExecutor's metrics, asked in parallel; one that does not answer
        within ``timeout_s`` (or fails) is left out rather than holding up the others."""
        registered = list(self.task_executors.items())

        async def one(reg: Any) -> MetricDump | None:
            try:
                dump: MetricDump = await reg.gateway.request_metric_dump(timeout=timeout_s)
                return dump
            except Exception as e:
                log.debug("metric dump of a TaskExecutor failed: %s", e)
                return None

        dumps = await asyncio.gather(*(one(reg) for _, reg in registered))
        return {rid: d for (rid, _), d in zip(registered, dumps, strict=True) if d is not None}

    async def request_slot_capacity(self) -> SlotCapacity:
        per_worker = max(1, self._config.get_int("taskmanager.numberOfTaskSlots"))
        started = [rid for d in (self.driver, self._cluster_driver) if d is not None for rid in d.processes]
        return slot_capacity(
            {rid: r.registration.num_slots for rid, r in self.task_executors.items()},
            started,
            per_worker,
            self.slots.free_slots(),
            self._workers_on_demand,
        )

    def count_task_executors_of(self, driver: LocalProcessDriver) -> None:
        """Count the TaskExecutors ``driver`` runs as this cluster's own when judging its
        capacity, registered or not yet: the HA cluster starts its local TaskExecutors outside
        the ResourceManager (they outlive a leader term, so this ResourceManager neither replaces
        nor stops them), and a job submitted before the last of them registered must be judged
        against the slots the cluster will have (application mode submits at once)."""
        self._cluster_driver = driver

    # -- active mode: TaskExecutor processes started on demand (application clusters) ----------

    def enable_workers_on_demand(self) -> LocalProcessDriver:
        """Start TaskExecutors when jobs ask for slots instead of a fixed number up front (Flink's
        active ResourceManager): whenever the pending slot requests exceed the free slots plus the
        slots of workers still starting, enough ``taskmanager.numberOfTaskSlots``-slot workers are
        started through the local driver. Crashed workers are replaced as before; a worker idle
        for ``resourcemanager.taskmanager-timeout``, or not registered within
        ``resourcemanager.taskmanager-registration.timeout``, is released (as in Flink's active
        mode)."""
        self._workers_on_demand = True
        self._workers = ActiveWorkers(
            _MAX_REPLACEMENTS_PER_MINUTE,
            idle_timeout_s=self._config.get_seconds("resourcemanager.taskmanager-timeout"),
            registration_timeout_s=self._config.get_seconds("resourcemanager.taskmanager-registration.timeout"),
        )
        self._worker_watch = asyncio.get_running_loop().create_task(self._watch_workers())
        return self.enable_local_processes()

    async def _watch_workers(self) -> None:
        """Tick the workers' core with the SlotManager's view; wake at its next timeout, at least
        every second (slots are allocated and freed while it sleeps)."""
        while True:
            due = self._workers.next_timeout()
            wait = 1.0 if due is None else min(1.0, max(0.0, due - self._clock()))
            await asyncio.sleep(max(wait, 0.01))
            tick = Tick(self.slots.idle_task_executors(), requests_waiting=self.slots.pending_slots() > 0)
            for action in self._workers.handle(tick, self._clock()):
                self._run_worker_action(action)

    def _run_worker_action(self, action: StartWorker | ReplacementRefused | ReleaseWorker) -> None:
        if self.driver is None or self._stopping:
            return
        if isinstance(action, StartWorker):
            self.driver.start_task_executor(new_id())
        elif isinstance(action, ReplacementRefused):
            log.error("not replacing a crashed TaskExecutor: %d replaced in the last minute", action.recent)
        else:
            log.info("releasing TaskExecutor %s: %s", action.resource_id, action.reason)
            self._forget(action.resource_id)  # idle or never registered: no job to tell
            self.driver.stop_task_executor(action.resource_id)

    def _start_workers_on_demand(self) -> None:
        driver = self.driver
        if not self._workers_on_demand or driver is None or self._stopping:
            return
        per_worker = max(1, self._config.get_int("taskmanager.numberOfTaskSlots"))
        starting = sum(1 for rid in driver.processes if rid not in self.task_executors)
        workers = self.slots.workers_to_start(per_worker, starting)
        if workers:
            pending = self.slots.pending_slots()
            log.info("starting %d TaskExecutor(s) for %d pending slot request(s)", workers, pending)
        for _ in range(workers):
            driver.start_task_executor(new_id())

    # -- internals -----------------------------------------------------------------------------

    def _allocate_soon(self) -> None:
        for alloc in self.slots.match():
            task = asyncio.get_running_loop().create_task(self._allocate(alloc))
            task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    async def _allocate(self, alloc: Allocation) -> None:
        reg = self.task_executors.get(alloc.resource_id)
        if reg is None:
            return
        req = alloc.request
        try:
            await reg.gateway.request_slot(
                alloc.slot_index,
                req.job_id,
                alloc.allocation_id,
                req.job_master_address,
                req.job_master_endpoint,
                req.job_master_token,
            )
        except FlottError as e:
            log.warning("slot request to %s failed: %s", alloc.resource_id, e)
            self.slots.free(alloc.resource_id, alloc.slot_index, alloc.allocation_id)
            self.slots.request(
                PendingRequest(
                    req.job_id, req.job_master_address, req.job_master_endpoint, req.job_master_token, 1
                )
            )
            await self._lose(alloc.resource_id, f"unreachable: {e}", notify=True)

    async def _on_process_exit(self, resource_id: str, code: int) -> None:
        how = f"killed by signal {-code}" if code < 0 else f"exited with code {code}"
        await self._lose(resource_id, f"TaskExecutor {resource_id} process {how}", notify=True)
        # A crashed worker is started again, so a restarting job finds its slots (rate-limited).
        for action in self._workers.handle(WorkerExited(resource_id, code), self._clock()):
            self._run_worker_action(action)

    def _forget(self, resource_id: str) -> tuple[_Registered | None, set[str]]:
        """Unregister a TaskExecutor at once (nothing is matched to it any more); returns its
        registration and the jobs that had slots on it."""
        reg = self.task_executors.pop(resource_id, None)
        self._heartbeats.handle(TargetUnregistered(resource_id), self._clock())
        jobs = self.slots.unregister(resource_id)
        if reg is not None:
            self._rpc.close_connection(reg.registration.rpc_address)
        return reg, jobs

    async def _lose(self, resource_id: str, cause: str, notify: bool) -> None:
        reg, jobs = self._forget(resource_id)
        if reg is None:
            return
        log.warning("TaskExecutor %s lost: %s", resource_id, cause)
        if not notify:
            return
        for job_id in jobs:
            req = self._job_masters.get(job_id)
            if req is None:
                continue
            jm = self._rpc.connect(
                req.job_master_address,
                req.job_master_endpoint,
                JobMasterGateway,
                fencing_token=req.job_master_token,
            )
            with contextlib.suppress(FlottError):
                await jm.disconnect_task_manager(resource_id, cause)

    async def _task_executor_timed_out(self, timed_out: TargetTimedOut) -> None:
        await self._lose(timed_out.target_id, timed_out.message, notify=True)
