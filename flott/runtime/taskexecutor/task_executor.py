"""The TaskExecutor: a worker process's slots and tasks.

It registers with the ResourceManager and heartbeats its slot report; when
the ResourceManager assigns one of its slots to a job it offers the slot to
that job's JobMaster, then runs the tasks the JobMaster deploys into it, each
on its own thread, and reports their states and metrics. Calls from a JobMaster
must carry that JobMaster's fencing token: a deposed JobMaster cannot deploy.

A job that ships Python files gets them through the LibraryCacheManager: the
first deployment of the job here starts fetching them from the BlobServer, its
tasks wait for them (DEPLOYING) before loading user code, and once the job has
left this TaskExecutor (no slot and no task of it remains) its ``sys.path``
entries, modules and per-job directory are removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
import psutil

from flott.configuration import Configuration
from flott.errors import (
    FencingTokenError,
    FlottError,
    JobNotFoundError,
    RpcConnectionError,
    RpcError,
    TaskExecutorLostError,
)
from flott.runtime.blob.library_cache import LibraryCacheManager
from flott.runtime.checkpoint.metadata import TaskStateSnapshot
from flott.runtime.entrypoint.log_files import LogFileInfo, LogFiles
from flott.runtime.entrypoint.thread_dump import ThreadStack, thread_stacks
from flott.runtime.execution.environment import (
    CheckpointAbortedMail,
    CheckpointCompleteMail,
    TaskEnvironment,
    TriggerCheckpointMail,
)
from flott.runtime.gateways.job_master_gateway import JobMasterGateway
from flott.runtime.gateways.resource_manager_gateway import RESOURCE_MANAGER_ENDPOINT, ResourceManagerGateway
from flott.runtime.gateways.task_executor_gateway import TASK_EXECUTOR_ENDPOINT
from flott.runtime.heartbeat.heartbeat_monitor import (
    HeartbeatMonitor,
    HeartbeatReceived,
    TargetRegistered,
    Tick,
)
from flott.runtime.highavailability.services import is_token_of_session
from flott.runtime.io.network.config import InputChannelSpec
from flott.runtime.messages.cluster import (
    SlotOffer,
    SlotReport,
    TaskExecutorRegistration,
    TaskExecutorToJobManagerHeartbeat,
)
from flott.runtime.messages.execution import ExecutionState, TaskDeploymentDescriptor, TaskExecutionState
from flott.runtime.metrics.flame_graph import StackSample, sample_threads
from flott.runtime.metrics.query_service import MetricDump, dump_registry
from flott.runtime.metrics.registry import MetricRegistry
from flott.runtime.metrics.reporter_setup import close_reporters, process_metric_registry
from flott.runtime.registration.retrying_registration import (
    AttemptFailed,
    GiveUp,
    RetryIn,
    RetryingRegistration,
)
from flott.runtime.rpc.service import RpcEndpoint, RpcService, WireError
from flott.runtime.taskexecutor.job_table import Action as JobTableAction
from flott.runtime.taskexecutor.job_table import Event as JobTableEvent
from flott.runtime.taskexecutor.job_table import (
    HeartbeatAnswered,
    HeartbeatFailed,
    HeartbeatRefused,
    JobClosed,
    JobLeaderFound,
    JobTable,
    ReleaseJob,
    ResourceManagerLeaderChanged,
    SlotsAccepted,
)
from flott.runtime.taskexecutor.slot_table import (
    AllocateSlot,
    CheckTimeouts,
    FreeJobSlots,
    FreeSlot,
    KeepOnlyJobs,
    MarkSlotActive,
    SlotFreed,
    TaskSlotTable,
)
from flott.runtime.taskexecutor.task import Task
from flott.runtime.taskexecutor.task_output import TaskOutputShipper

log = logging.getLogger(__name__)

_HA_REGISTRATION_RETRY_S = 0.2


@dataclass
class _JobManagerConnection:
    job_id: str
    address: str
    endpoint: str
    token: str
    gateway: JobMasterGateway
    heartbeat: asyncio.Task[None] | None = None
    tasks: set[str] = field(default_factory=set)


def _default_invokable(env: TaskEnvironment) -> Any:
    # deferred: the task stack (operators, state backends), ~80 ms of a TaskExecutor's start-up
    # before it registers; the first deployment pays it instead
    from flott.runtime.tasks.stream_task import StreamTask

    return StreamTask(env)


class TaskExecutor(RpcEndpoint):
    endpoint_id = TASK_EXECUTOR_ENDPOINT

    def __init__(
        self,
        rpc: RpcService,
        shuffle: Any,
        config: Configuration,
        resource_id: str,
        resource_manager_address: str,
        invokable: Callable[[TaskEnvironment], Any] = _default_invokable,
        high_availability: bool = False,
    ) -> None:
        """``high_availability``: the ResourceManager is found by leader retrieval, which calls
        :meth:`notify_resource_manager_leader` (``resource_manager_address`` is not used then)."""
        self._rpc = rpc
        self._shuffle = shuffle
        self._config = config
        self.resource_id = resource_id
        self._rm_address = resource_manager_address
        self._rm: ResourceManagerGateway = rpc.connect(
            resource_manager_address, RESOURCE_MANAGER_ENDPOINT, ResourceManagerGateway
        )
        self._invokable = invokable
        self.slot_table = TaskSlotTable(
            config.get_int("taskmanager.numberOfTaskSlots"),
            config.get_seconds("taskmanager.slot.timeout", config.get("pekko.ask.timeout", "10 s")),
        )
        """The slots (pure: :mod:`~flott.runtime.taskexecutor.slot_table`); RPC methods feed it events."""
        self._offering: set[str] = set()
        """Allocations whose offer to their JobMaster has not been answered yet (they do not expire)."""
        self.tasks: dict[str, Task] = {}
        self.job_managers: dict[str, _JobManagerConnection] = {}
        """The open connections (gateways, heartbeat loops); their states are in ``job_table``."""
        self._heartbeat_interval = config.get_seconds("heartbeat.interval")
        self._heartbeat_timeout = config.get_seconds("heartbeat.timeout")
        self._registration_timeout = config.get_seconds("taskmanager.registration.timeout")
        self._registration_delays = (
            config.get_seconds("cluster.registration.initial-timeout"),
            config.get_seconds("cluster.registration.max-timeout"),
        )
        self._background: set[asyncio.Task[None]] = set()
        self.libraries = LibraryCacheManager(config, resource_id)
        self.terminated = asyncio.Event()
        self._rm_heartbeat = HeartbeatMonitor(self._heartbeat_timeout)
        """The ResourceManager's liveness as this TaskExecutor sees it (its answers to our heartbeats)."""
        self._rm_contact(registered=True)
        self._ha = high_availability
        self.job_table = JobTable(self._heartbeat_timeout, high_availability)
        """The JobMaster connections (pure: :mod:`~flott.runtime.taskexecutor.job_table`)."""
        self._rm_session: str | None = None
        """HA: the leader session of the ResourceManager this TaskExecutor serves (its fencing token)."""
        self._rm_connect: asyncio.Task[None] | None = None
        self._registration: TaskExecutorRegistration | None = None
        self.metric_registry: MetricRegistry = process_metric_registry(
            config, "taskmanager", resource_id, config.get("taskmanager.bind-host")
        )
        self.task_output = TaskOutputShipper()
        """What tasks print, shipped to their JobMasters (the jobs' logs)."""

    async def start(self, data_address: str) -> None:
        self._rpc.register(self)
        self._spawn(self.metric_registry.run_view_updater())
        self.task_output.install()
        self._spawn(self.task_output.run())
        self._registration = TaskExecutorRegistration(
            resource_id=self.resource_id,
            rpc_address=self._rpc.address,
            data_address=data_address,
            num_slots=len(self.slot_table),
            pid=os.getpid(),
            hostname=socket.gethostname(),
            memory_bytes=psutil.virtual_memory().total,
            cpu_cores=os.cpu_count() or 1,
        )
        if self._ha:
            self._spawn(self._heartbeat_resource_manager())
            return  # registration follows the leader retrieval's notification
        await self._register()
        self._spawn(self._heartbeat_resource_manager())

    def _slot_report(self) -> SlotReport:
        return self.slot_table.slot_report()

    def _slots(self, event: Any) -> list[SlotFreed]:
        return self.slot_table.handle(event, time.monotonic())

    async def _slots_freed(self, freed: list[SlotFreed]) -> None:
        """Carry out what freeing slots means: the allocation's tasks are cancelled, a job with no
        slot left here loses its JobManager connection, the ResourceManager learns the slot is free."""
        for f in freed:
            for task in list(self.tasks.values()):
                if task.tdd.allocation_id == f.allocation_id:
                    task.cancel()
            if f.last_of_job:
                self._close_job(f.job_id)
            with contextlib.suppress(FlottError):
                await self._rm.notify_slot_available(self.resource_id, f.index, f.allocation_id)

    async def _register(self) -> None:
        """Register with the ResourceManager, retrying as Flink's TaskExecutor does (when, and for
        how long: :mod:`~flott.runtime.registration.retrying_registration`, with
        taskmanager.registration.timeout and cluster.registration.initial-/max-timeout). The
        registration carries the current slot report."""
        assert self._registration is not None
        initial_delay, max_delay = self._registration_delays
        retries = RetryingRegistration(initial_delay, max_delay, self._registration_timeout, time.monotonic())
        while True:
            registration = msgspec.structs.replace(self._registration, slot_report=self._slot_report())
            try:
                await self._rm.register_task_executor(registration)
                break
            except RpcError as e:
                retry = retries.handle(AttemptFailed(isinstance(e, RpcConnectionError)), time.monotonic())
                if isinstance(retry, GiveUp):
                    raise
                log.info(
                    "registration at %s failed (%s); retrying in %.1f s", self._rm_address, e, retry.delay_s
                )
                await asyncio.sleep(retry.delay_s)
        log.info("TaskExecutor %s registered at the ResourceManager %s", self.resource_id, self._rm_address)
        self._rm_contact(registered=True)

    def _rm_contact(self, registered: bool = False) -> None:
        event = TargetRegistered(RESOURCE_MANAGER_ENDPOINT, "the ResourceManager") if registered else (
            HeartbeatReceived(RESOURCE_MANAGER_ENDPOINT)
        )
        self._rm_heartbeat.handle(event, time.monotonic())

    async def _reconnect_resource_manager(self, cause: str) -> bool:
        """The ResourceManager wrote this TaskExecutor off (e.g. it was paused longer than the
        heartbeat timeout): drop the jobs whose JobMasters did the same, then register again.
        False if registering failed for good (the process then ends, and its driver or operator
        replaces it)."""
        log.warning("the ResourceManager at %s lost this TaskExecutor (%s): registering again",
                    self._rm_address, cause)
        await self._release_jobs_written_off()
        try:
            await self._register()
        except RpcError as e:
            if self._ha:
                return True  # the leader retrieval names the next ResourceManager
            log.error("registering again at %s failed: %s; shutting down", self._rm_address, e)
            return False
        log.info("registered again with the ResourceManager at %s", self._rm_address)
        return True

    async def _release_jobs_written_off(self) -> None:
        """Ask each JobMaster whether it still counts on this TaskExecutor; release the jobs that
        do not (their tasks were replaced elsewhere or wait for new slots)."""
        for job_id, conn in list(self.job_managers.items()):
            try:
                await conn.gateway.heartbeat_from_task_executor(
                    TaskExecutorToJobManagerHeartbeat(self.resource_id, []), timeout=self._heartbeat_timeout
                )
            except FlottError as e:
                self._release_job(job_id, f"its JobMaster no longer counts on this TaskExecutor: {e}")
        # Slots of jobs without a JobManager connection go silently: the registration that follows
        # reports them free.
        self._slots(KeepOnlyJobs(frozenset(self.job_managers), "no JobManager connection"))

    def _spawn(self, coro: Any) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def _heartbeat_resource_manager(self) -> None:
        while True:
            await self._slots_freed(self._slots(CheckTimeouts(frozenset(self._offering))))
            if self._ha and (self._rm_session is None or self._rm_connect is not None):
                await asyncio.sleep(self._heartbeat_interval)  # no leader known / registering
                continue
            try:
                await self._rm.heartbeat_from_task_executor(
                    self.resource_id, self._slot_report(), timeout=self._heartbeat_timeout
                )
                self._rm_contact()
            except TaskExecutorLostError as e:
                if not await self._reconnect_resource_manager(str(e)):
                    self.terminated.set()
                    return
            except RpcError as e:
                if self._ha:
                    pass  # a leader change: the retrieval names the next ResourceManager
                elif self._rm_heartbeat.handle(Tick(), time.monotonic()):
                    log.warning(
                        "ResourceManager at %s unreachable for %.0fs (%s): shutting down",
                        self._rm_address,
                        self._heartbeat_timeout,
                        e,
                    )
                    self.terminated.set()
                    return
            await asyncio.sleep(self._heartbeat_interval)

    async def _heartbeat_job_manager(self, conn: _JobManagerConnection) -> None:
        while True:
            metrics = [self.tasks[eid].metrics() for eid in list(conn.tasks) if eid in self.tasks]
            event: JobTableEvent
            try:
                await conn.gateway.heartbeat_from_task_executor(
                    TaskExecutorToJobManagerHeartbeat(self.resource_id, metrics),
                    timeout=self._heartbeat_timeout,
                )
                event = HeartbeatAnswered(conn.job_id, conn.token)
            except TaskExecutorLostError as e:
                event = HeartbeatRefused(conn.job_id, conn.token, str(e))
            except FlottError as e:
                event = HeartbeatFailed(conn.job_id, conn.token, str(e))
            self._jobs(event)
            if not self.job_table.is_connected(conn.job_id, conn.token):
                return  # lost (its job released), replaced or closed
            await asyncio.sleep(self._heartbeat_interval)

    def _jobs(self, event: JobTableEvent) -> None:
        """Feed the job table an event and carry out its actions (all synchronous)."""
        for action in self.job_table.handle(event, time.monotonic()):
            self._run_job_action(action)

    def _run_job_action(self, action: JobTableAction) -> None:
        if isinstance(action, ReleaseJob):
            self._release_job(action.job_id, action.cause)
            return
        c = action.connection
        old = self.job_managers.get(c.job_id)
        if old is not None and old.heartbeat is not None:
            old.heartbeat.cancel()
        gw = self._rpc.connect(c.address, c.endpoint, JobMasterGateway, fencing_token=c.token)
        conn = _JobManagerConnection(c.job_id, c.address, c.endpoint, c.token, gw)
        self.job_managers[c.job_id] = conn
        conn.heartbeat = self._spawn(self._heartbeat_job_manager(conn))

    # -- high availability ---------------------------------------------------------------------

    def notify_resource_manager_leader(self, address: str | None, session_id: str | None) -> None:
        """Leader retrieval (on the loop): a new ResourceManager leader, or none known."""
        if address is None or session_id is None or session_id == self._rm_session:
            return  # no leader for now (keep serving), or the same leader again
        if self._rm_connect is not None:
            self._rm_connect.cancel()
        self._rm_connect = self._spawn(self._connect_resource_manager(address, session_id))

    async def _connect_resource_manager(self, address: str, session_id: str) -> None:
        """Serve the leader of ``session_id``: drop every job of another leader, then register."""
        old = self._rm_address
        self._rm_session, self._rm_address = session_id, address
        self._rm = self._rpc.connect(
            address, RESOURCE_MANAGER_ENDPOINT, ResourceManagerGateway, fencing_token=session_id
        )
        if old and old != address:
            self._rpc.close_connection(old)
        self._jobs(ResourceManagerLeaderChanged(session_id))
        # Slots offered to a deposed leader's JobMaster, not yet used; the registration reports them.
        self._slots(KeepOnlyJobs(frozenset(self.job_managers), "a new ResourceManager leader"))
        assert self._registration is not None
        # the leader retrieval names the leader: it is up, and retried for as long as it leads
        retries = RetryingRegistration(
            _HA_REGISTRATION_RETRY_S, _HA_REGISTRATION_RETRY_S, None, time.monotonic()
        )
        try:
            while True:
                try:
                    await self._rm.register_task_executor(
                        msgspec.structs.replace(self._registration, slot_report=self._slot_report())
                    )
                    break
                except RpcError as e:
                    log.info("registration at %s failed (%s); retrying", address, e)
                    retry = retries.handle(AttemptFailed(isinstance(e, RpcConnectionError)), time.monotonic())
                    assert isinstance(retry, RetryIn)  # no deadline: never GiveUp
                    await asyncio.sleep(retry.delay_s)
            self._rm_contact(registered=True)
            log.info("registered with the ResourceManager leader at %s", address)
        finally:
            if self._rm_session == session_id:
                self._rm_connect = None

    def _release_job(self, job_id: str, cause: str) -> None:
        """Cancel the job's tasks and free its slots here (its JobManager is gone)."""
        log.warning("releasing job %s: %s", job_id, cause)
        for task in list(self.tasks.values()):
            if task.tdd.job_id == job_id:
                task.cancel()
        self._slots(FreeJobSlots(job_id, cause))  # the heartbeat's slot report tells the RM
        self._close_job(job_id)

    # -- RPC -----------------------------------------------------------------------------------

    async def request_slot(
        self,
        slot_index: int,
        job_id: str,
        allocation_id: str,
        job_master_address: str,
        job_master_endpoint: str,
        job_master_token: str,
    ) -> None:
        session = self._rm_session
        if self._ha and (session is None or not is_token_of_session(job_master_token, session)):
            raise FencingTokenError(
                f"slot request for job {job_id} from a JobMaster of leader session "
                f"{job_master_token.split('/')[0]!r}; this TaskExecutor serves {self._rm_session!r}"
            )
        self._slots(AllocateSlot(slot_index, job_id, allocation_id))  # SlotAllocationError if taken
        self._jobs(JobLeaderFound(job_id, job_master_address, job_master_endpoint, job_master_token))
        self._spawn(self._offer(self.job_managers[job_id], SlotOffer(allocation_id, slot_index)))

    async def _offer(self, conn: _JobManagerConnection, offer: SlotOffer) -> None:
        self._offering.add(offer.allocation_id)
        try:
            accepted = await conn.gateway.offer_slots(
                self.resource_id, self._rpc.address, self._shuffle.address, [offer]
            )
        except FlottError as e:
            log.warning("offering slot to job %s failed: %s", conn.job_id, e)
            accepted = []
        finally:
            self._offering.discard(offer.allocation_id)
        if offer not in accepted:
            await self.free_slot(offer.allocation_id, "offer rejected")
        else:
            self._jobs(SlotsAccepted(conn.job_id, conn.token))
            self._slots(MarkSlotActive(offer.allocation_id))

    async def submit_task(self, tdd: TaskDeploymentDescriptor, job_master_token: str) -> None:
        conn = self.job_managers.get(tdd.job_id)
        if conn is None or conn.token != job_master_token:
            raise FencingTokenError(
                f"task for job {tdd.job_id} comes from a JobMaster this TaskExecutor "
                "does not serve (stale leader?)"
            )
        if not self.slot_table.is_allocated(tdd.allocation_id):
            raise FlottError(f"no slot with allocation {tdd.allocation_id} on {self.resource_id}")
        prepare = None
        if tdd.python_artifacts:
            libraries = self.libraries.register_job(tdd.job_id, tdd.python_artifacts, tdd.blob_server_address)
            prepare = libraries.wait_ready
        gates = [
            self._shuffle.create_input_gate(
                [
                    InputChannelSpec(c.producer_address, c.partition_id, c.subpartition_index)
                    for c in g.channels
                ]
            )
            for g in tdd.input_gates
        ]
        partitions = [
            self._shuffle.create_result_partition(p.partition_id, p.num_subpartitions, p.blocking)
            for p in tdd.output_partitions
        ]
        loop = asyncio.get_running_loop()

        def report(state: ExecutionState, error: WireError | None) -> None:
            self._spawn(self._report(conn, tdd.execution_id, state, error))

        responder = _CheckpointResponder(self, conn, tdd.execution_id, loop)
        invokable = self.task_output.capturing(tdd, conn.gateway.report_task_output, self._invokable)
        task = Task(
            tdd, gates, partitions, loop, report, invokable, prepare, responder,
            metric_registry=self.metric_registry, task_manager_id=self.resource_id,
        )
        self.tasks[tdd.execution_id] = task
        conn.tasks.add(tdd.execution_id)
        task.start()

    async def _report(
        self, conn: _JobManagerConnection, execution_id: str, state: ExecutionState, error: WireError | None
    ) -> None:
        log.info("task %s of job %s switched to %s", execution_id, conn.job_id, state.name)
        final_metrics = None
        accumulators: dict[str, bytes] = {}
        result_bytes: dict[str, int] = {}
        if state.is_terminal():
            task = self.tasks.pop(execution_id, None)
            if task is not None:
                final_metrics = task.final_metrics
                if state is ExecutionState.FINISHED:
                    accumulators = dict(task.env.accumulators)
                    result_bytes = task.result_bytes()
            conn.tasks.discard(execution_id)
            self._release_libraries_if_gone(conn.job_id)
            await self.task_output.finish(execution_id)  # the job's log has all output first
        try:
            await conn.gateway.update_task_execution_state(
                TaskExecutionState(
                    conn.job_id, execution_id, state, error, final_metrics, accumulators, result_bytes
                )
            )
        except FlottError as e:
            log.warning("reporting %s of %s failed: %s", state.name, execution_id, e)

    async def cancel_task(self, execution_id: str) -> None:
        task = self.tasks.get(execution_id)
        if task is None:
            raise JobNotFoundError(f"no task {execution_id} on {self.resource_id}")
        task.cancel()

    def _task(self, execution_id: str) -> Task:
        task = self.tasks.get(execution_id)
        if task is None:
            raise JobNotFoundError(f"no task {execution_id} on {self.resource_id}")
        return task

    async def trigger_checkpoint(
        self,
        execution_id: str,
        checkpoint_id: int,
        timestamp: int,
        checkpoint_type: str,
        location: str,
        drain: bool = False,
    ) -> None:
        self._task(execution_id).deliver(
            TriggerCheckpointMail(checkpoint_id, timestamp, checkpoint_type, location, drain)
        )

    async def deliver_coordination_request(
        self, execution_id: str, operator_id: str, request: bytes
    ) -> bytes:
        """A client's request for an operator of a running task (the collect sink): its answer, or
        ``b""`` while the operator has not registered a handler (not open yet, or closed)."""
        task = self.tasks.get(execution_id)
        handler = task.env.coordination_handlers.get(operator_id) if task is not None else None
        if handler is None:
            return b""
        try:
            return handler(request)
        except Exception as e:  # a malformed request must not reach the RPC layer as a crash
            log.warning("coordination request for operator %s of %s failed: %s", operator_id, execution_id, e)
            return b""

    async def notify_checkpoint_complete(self, execution_id: str, checkpoint_id: int, final: bool) -> None:
        task = self.tasks.get(execution_id)
        if task is not None:
            task.deliver(CheckpointCompleteMail(checkpoint_id, final))

    async def notify_checkpoint_aborted(self, execution_id: str, checkpoint_id: int) -> None:
        task = self.tasks.get(execution_id)
        if task is not None:
            task.deliver(CheckpointAbortedMail(checkpoint_id))

    async def _send_ack(
        self, conn: _JobManagerConnection, execution_id: str, checkpoint_id: int, snapshot: TaskStateSnapshot
    ) -> None:
        try:
            await conn.gateway.acknowledge_checkpoint(execution_id, checkpoint_id, snapshot)
        except FlottError as e:
            log.warning("acknowledging checkpoint %d of %s failed: %s", checkpoint_id, execution_id, e)

    async def _send_decline(
        self, conn: _JobManagerConnection, execution_id: str, checkpoint_id: int, reason: str
    ) -> None:
        try:
            await conn.gateway.decline_checkpoint(execution_id, checkpoint_id, reason)
        except FlottError as e:
            log.warning("declining checkpoint %d of %s failed: %s", checkpoint_id, execution_id, e)

    async def free_slot(self, allocation_id: str, cause: str) -> None:
        await self._slots_freed(self._slots(FreeSlot(allocation_id, cause)))

    async def release_partitions(self, partition_ids: list[str]) -> None:
        """Drop result partitions nobody will read (a BATCH job's finished results of a failed attempt)."""
        release = getattr(self._shuffle, "release_partitions", None)
        if release is not None:
            release(list(partition_ids))

    def _close_job(self, job_id: str) -> None:
        conn = self.job_managers.pop(job_id, None)
        self._jobs(JobClosed(job_id))
        if conn is not None and conn.heartbeat is not None:
            conn.heartbeat.cancel()
        release = getattr(self._shuffle, "release_partitions", None)
        if release is not None:
            with contextlib.suppress(Exception):
                release(job_id)
        self._release_libraries_if_gone(job_id)

    def _release_libraries_if_gone(self, job_id: str) -> None:
        """Drop the job's Python files once it has neither a JobManager connection nor a task here.

        Both must be gone: slots are freed while cancelled tasks still unwind on
        their threads, and a failed task's slot stays with the job for its
        next attempt.
        """
        if job_id not in self.libraries.jobs or job_id in self.job_managers:
            return
        if any(t.tdd.job_id == job_id for t in self.tasks.values()):
            return
        self.libraries.release_job(job_id)

    async def disconnect_job_manager(self, job_id: str, cause: str) -> None:
        for task in list(self.tasks.values()):
            if task.tdd.job_id == job_id:
                task.cancel()
        self._close_job(job_id)

    # -- log files (served by the JobManager's REST endpoint: /taskmanagers/:id/log ...) --------

    async def request_log_list(self) -> list[LogFileInfo]:
        return await asyncio.to_thread(LogFiles.of_this_process(self._config, "TaskManager").list)

    async def request_log_file(self, kind: str, name: str, max_bytes: int) -> bytes:
        """The last ``max_bytes`` of a log file (``kind``: file, log or stdout; see LogFiles.read)."""
        files = LogFiles.of_this_process(self._config, "TaskManager")
        return await asyncio.to_thread(files.read, kind, name, max_bytes)

    async def request_thread_dump(self) -> list[ThreadStack]:
        return thread_stacks()

    async def request_thread_samples(
        self, job_id: str, vertex_id: str, subtasks: list[int],
        num_samples: int, delay_ms: int, max_depth: int,
    ) -> list[StackSample]:
        """Stacks of the threads running those subtasks of the vertex (all, if ``subtasks`` is
        empty), for a flame graph."""
        threads = [
            t.thread for t in list(self.tasks.values())
            if t.tdd.job_id == job_id and t.tdd.vertex.id == vertex_id and not t.state.is_terminal()
            and (not subtasks or t.tdd.subtask_index in subtasks)
        ]
        return await sample_threads(threads, num_samples, delay_ms / 1000.0, max_depth)

    async def request_metric_dump(self) -> MetricDump:
        """Every metric of this process (Flink's MetricQueryService), read now."""
        return dump_registry(self.metric_registry)

    async def shutdown(self) -> None:
        asyncio.get_running_loop().call_later(0.01, self.terminated.set)

    async def close(self) -> None:
        for task in list(self.tasks.values()):
            task.cancel()
        for task in list(self.tasks.values()):
            await asyncio.to_thread(task.join, 2.0)
        for t in list(self._background):
            t.cancel()
        close_reporters(self.metric_registry)
        self.task_output.uninstall()
        with contextlib.suppress(Exception):
            await self.libraries.close()
        self._rpc.unregister(self.endpoint_id)


class _CheckpointResponder:
    """A task thread's acknowledgements and declines, sent to its JobMaster from the event loop."""

    def __init__(
        self,
        executor: TaskExecutor,
        conn: _JobManagerConnection,
        execution_id: str,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self._executor = executor
        self._conn = conn
        self._execution_id = execution_id
        self._loop = loop

    def acknowledge(self, checkpoint_id: int, snapshot: TaskStateSnapshot) -> None:
        ex, conn, eid = self._executor, self._conn, self._execution_id
        self._loop.call_soon_threadsafe(lambda: ex._spawn(ex._send_ack(conn, eid, checkpoint_id, snapshot)))

    def decline(self, checkpoint_id: int, reason: str) -> None:
        ex, conn, eid = self._executor, self._conn, self._execution_id
        self._loop.call_soon_threadsafe(lambda: ex._spawn(ex._send_decline(conn, eid, checkpoint_id, reason)))
