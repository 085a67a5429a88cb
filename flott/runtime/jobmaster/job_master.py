"""The JobMaster: runs one job (the asyncio shell around the ExecutionGraph).

It asks the ResourceManager for slots, accepts the slots TaskExecutors offer,
deploys subtasks, follows their reports and heartbeats, and reports the job's
outcome to its JobManagerRunner. All decisions are made by the pure
:class:`ExecutionGraph`; this module only does I/O and timing.

Events are handled synchronously (:meth:`JobMaster._handle`): the graph decides, and every action
that needs I/O (a slot request, a deployment, a cancellation, releasing the slots and reporting
the result of a terminal job) is spawned as a task of its own, never awaited between two actions.
So the graph sees events one whole decision at a time, and an action never runs against a graph
that changed while an earlier action of the same decision was waiting for a reply; the outcome of
a spawned action comes back as an event.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flott.common.job_status import JobStatus
from flott.configuration import Configuration, merged_job_config
from flott.errors import (
    FlottError,
    JobNotFoundError,
    NoResourceAvailableError,
    RpcError,
    TaskExecutorLostError,
)
from flott.runtime.checkpoint.coordinator import CheckpointConfig
from flott.runtime.checkpoint.errors import CheckpointTriggerError
from flott.runtime.checkpoint.metadata import TaskStateSnapshot
from flott.runtime.checkpoint.restore import SnapshotToRestore
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage
from flott.runtime.executiongraph.failover.restart_backoff_time_strategy import (
    create_restart_strategy,
    is_recoverable,
)
from flott.runtime.gateways.job_master_gateway import job_master_endpoint
from flott.runtime.gateways.resource_manager_gateway import ResourceManagerGateway
from flott.runtime.gateways.task_executor_gateway import TASK_EXECUTOR_ENDPOINT, TaskExecutorGateway
from flott.runtime.heartbeat.heartbeat_manager import check_period, watch_heartbeats
from flott.runtime.heartbeat.heartbeat_monitor import (
    HeartbeatMonitor,
    HeartbeatReceived,
    TargetRegistered,
    TargetTimedOut,
    TargetUnregistered,
)
from flott.runtime.jobgraph import JobGraph, new_id
from flott.runtime.jobmaster.checkpointing import CheckpointCoordinatorDriver
from flott.runtime.jobmaster.deployment import build_deployment
from flott.runtime.jobmaster.execution_graph import (
    Action,
    CancelJob,
    CancelTask,
    DeployTasks,
    Event,
    ExecutionGraph,
    GlobalFailure,
    JobStatusChanged,
    ReleasePartitions,
    RequestSlots,
    RestartJob,
    ScheduleRestart,
    SlotAssigned,
    StartScheduling,
    TaskExecutorLost,
    TaskStateChanged,
)
from flott.runtime.jobmaster.slot_request_deadline import (
    SlotCheck,
    SlotRequestDeadline,
    SlotRequestTimedOut,
    StopWaiting,
)
from flott.runtime.messages.cluster import SlotOffer, TaskExecutorToJobManagerHeartbeat
from flott.runtime.messages.execution import (
    ExecutionState,
    PythonArtifactDescriptor,
    TaskExecutionState,
    TaskMetrics,
)
from flott.runtime.messages.job import ExecutionGraphInfo, JobDetails, JobResult, VertexDetails
from flott.runtime.messages.task_output import TaskOutputBatch
from flott.runtime.rpc.service import RpcEndpoint, RpcService, error_to_wire
from flott.runtime.scheduler.adaptivebatch.adaptive_batch_plan import AdaptiveBatchPlan
from flott.runtime.scheduler.adaptivebatch.vertex_parallelism_decider import AdaptiveBatchSettings

if TYPE_CHECKING:
    from flott.runtime.highavailability.services import CheckpointRecorder
    from flott.runtime.jobmaster.job_log import JobLogWriter

log = logging.getLogger(__name__)


_REDECLARE_SLOTS_S = 3.0


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class _TaskManagerEntry:
    resource_id: str
    address: str
    data_address: str
    gateway: TaskExecutorGateway


class JobMaster(RpcEndpoint):
    fenced = True

    def __init__(
        self,
        job_graph: JobGraph,
        rpc: RpcService,
        resource_manager: ResourceManagerGateway,
        config: Configuration,
        on_terminal: Callable[[JobResult, ExecutionGraphInfo], None],
        clock: Callable[[], float] = time.monotonic,
        python_artifacts: Sequence[PythonArtifactDescriptor] = (),
        blob_server_address: str = "",
        initial_snapshot: SnapshotToRestore | None = None,
        fencing_token: str | None = None,
        checkpoint_recorder: CheckpointRecorder | None = None,
        first_checkpoint_id: int = 1,
        job_log: JobLogWriter | None = None,
    ) -> None:
        """``python_artifacts`` are the job's files in the BlobServer at ``blob_server_address``.

        The JobMaster only passes their keys on to the TaskExecutors; it never
        reads (let alone imports) them. ``initial_snapshot``: the savepoint (or
        retained checkpoint) the job starts from, already read and checked by the
        Dispatcher. HA mode passes ``fencing_token`` (derived from the leader session, so
        TaskExecutors can tell a deposed leader's JobMaster), ``checkpoint_recorder`` and
        ``first_checkpoint_id`` (see :class:`CheckpointCoordinatorDriver`). ``job_log``: where
        the job's task output and status changes go (:mod:`flott.runtime.jobmaster.job_log`).
        """
        self.job_graph = job_graph
        self.python_artifacts = list(python_artifacts)
        self.blob_server_address = blob_server_address
        self.endpoint_id = job_master_endpoint(job_graph.job_id)
        self.fencing_token = fencing_token or new_id()
        self._rpc = rpc
        self._rm = resource_manager
        self._config = config
        self._on_terminal = on_terminal
        self._clock = clock
        self.job_config = merged_job_config(config.to_dict(), job_graph.config)
        """The cluster's configuration overridden by the job's: what tasks and strategies read."""
        self.streaming = self.job_config.get("execution.runtime-mode", "STREAMING").upper() != "BATCH"
        checkpoint_config = _with_default_dirs(CheckpointConfig.from_config(self.job_config))
        adaptive = None
        if not self.streaming:
            unconfigured = [v.parallelism for v in job_graph.vertices if not v.parallelism_configured]
            settings = AdaptiveBatchSettings.from_config(self.job_config, max(unconfigured, default=None))
            if settings.enabled:
                adaptive = AdaptiveBatchPlan(job_graph, settings)
        self.graph = ExecutionGraph(
            job_graph,
            now_ms(),
            restart_policy=create_restart_strategy(
                self.job_config,
                checkpointing_enabled=self.streaming and checkpoint_config.interval_ms is not None,
            ),
            is_recoverable=is_recoverable,
            adaptive=adaptive,
        )
        self.checkpointing: CheckpointCoordinatorDriver | None = None
        if self.streaming:
            self.checkpointing = CheckpointCoordinatorDriver(
                job_graph,
                lambda: self.graph,
                checkpoint_config,
                FsspecCheckpointStorage(),
                self._task_executor_gateway,
                self._spawn,
                self._fail_globally,
                initial_snapshot,
                recorder=checkpoint_recorder,
                first_checkpoint_id=first_checkpoint_id,
            )
        self._task_managers: dict[str, _TaskManagerEntry] = {}
        self.metrics: dict[str, TaskMetrics] = {}
        self.accumulators: dict[str, bytes] = {}
        """Accumulators of finished tasks, opaque bytes (a collect sink's last results)."""
        self._heartbeat_timeout = config.get_seconds("heartbeat.timeout")
        self._heartbeat_interval = config.get_seconds("heartbeat.interval")
        self._heartbeats = HeartbeatMonitor(self._heartbeat_timeout)
        """The liveness of the TaskExecutors in ``_task_managers`` (pure; ticked by the shell)."""
        self._slot_timeout = config.get_seconds("slot.request.timeout")
        self._background: set[asyncio.Task[None]] = set()
        self._terminated = False
        self._terminal_event = asyncio.Event()
        self.job_log = job_log

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        self._rpc.register(self)
        self._spawn(
            watch_heartbeats(
                self._heartbeats,
                self._clock,
                check_period(self._heartbeat_interval, self._heartbeat_timeout),
                self._task_manager_timed_out,
            )
        )
        if self.job_log is not None:
            self._spawn(self.job_log.run())
        if self.checkpointing is not None:
            self._spawn(self.checkpointing.run_timer())
        self._handle(StartScheduling())

    def suspend(self, reason: str) -> None:
        """Leadership lost (HA): stop at once, without ending the job. No result is reported and
        nothing is released: the TaskExecutors cancel the tasks when they lose this JobMaster or a
        new leader's JobMaster takes their slots. :meth:`stop` finishes the cleanup."""
        if self._terminated:
            return
        self._terminated = True
        self._rpc.unregister(self.endpoint_id)
        for task in list(self._background):
            task.cancel()
        if self.job_log is not None:
            self.job_log.abandon()
        if self.checkpointing is not None:
            self.checkpointing.shutdown(f"job master suspended: {reason}")
        log.info("job %s: suspended (%s)", self.job_graph.job_id, reason)

    async def stop(self) -> None:
        if self.job_log is not None and not self._terminated:
            await self.job_log.flush()  # the process stops under a running job: keep what it wrote
        for task in list(self._background):
            task.cancel()
        for task in list(self._background):
            with contextlib.suppress(BaseException):
                await task
        self._rpc.unregister(self.endpoint_id)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- events in, actions out ------------------------------------------------------------

    def _handle(self, event: Event) -> None:
        if self._terminated:
            return
        actions = self.graph.handle(event, now_ms())
        if self.checkpointing is not None:
            self.checkpointing.on_graph_changed()
        self._run(actions)

    def _task_executor_gateway(self, resource_id: str) -> TaskExecutorGateway | None:
        tm = self._task_managers.get(resource_id)
        return tm.gateway if tm is not None else None

    async def _fail_globally(self, error: FlottError, restartable: bool = True) -> None:
        self._handle(GlobalFailure(error_to_wire(error), str(error), restartable=restartable))

    def _run(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, RequestSlots):
                self._spawn(self._request_slots(action.count, self.graph.num_restarts))
            elif isinstance(action, ScheduleRestart):
                self._spawn(self._restart_after(action.delay_ms))
            elif isinstance(action, DeployTasks):
                self._spawn(self._deploy(action.execution_ids))
            elif isinstance(action, CancelTask):
                self._spawn(self._cancel_task(action))
            elif isinstance(action, ReleasePartitions):
                self._spawn(self._release_partitions(action))
            elif isinstance(action, JobStatusChanged):
                cause = f": {action.failure.type}: {action.failure.message}" if action.failure else ""
                log.info(
                    "job %s: %s -> %s (%s)%s",
                    self.job_graph.job_id,
                    action.old.name,
                    action.new.name,
                    action.stimulus,
                    cause[:2000],
                )
                if self.job_log is not None:
                    change = f"Job {action.new.name} (was {action.old.name}: {action.stimulus}){cause}"
                    self.job_log.append_status(action.new.name, change[:4000])
                if action.new in (JobStatus.FINISHED, JobStatus.FAILED, JobStatus.CANCELED):
                    self._reached_terminal()

    async def _request_slots(self, count: int, attempt: int) -> None:
        try:
            await self._rm.request_slots(
                self.job_graph.job_id, self._rpc.address, self.endpoint_id, self.fencing_token or "", count
            )
        except FlottError as e:
            self._handle(GlobalFailure(error_to_wire(e), "slot request failed"))
            return
        await self._slot_deadline(attempt)

    async def _restart_after(self, delay_ms: int) -> None:
        log.info("job %s: restarting in %d ms", self.job_graph.job_id, delay_ms)
        await asyncio.sleep(delay_ms / 1000)
        self._handle(RestartJob())

    async def _deploy(self, execution_ids: list[str]) -> None:
        addresses = {rid: tm.data_address for rid, tm in self._task_managers.items()}
        restores = {}
        if self.checkpointing is not None:
            try:
                restores = self.checkpointing.plan_restore(
                    [self.graph.executions[eid] for eid in execution_ids if eid in self.graph.executions]
                )
            except FlottError as e:
                await self._fail_globally(e, restartable=False)
                return

        async def deploy_one(execution_id: str) -> None:
            ex = self.graph.executions.get(execution_id)
            if ex is None or ex.state is not ExecutionState.DEPLOYING:
                return  # superseded by a failover meanwhile
            assert ex.resource_id is not None
            tm = self._task_managers.get(ex.resource_id)
            if tm is None:
                self._handle(
                    TaskExecutorLost(ex.resource_id, f"TaskExecutor {ex.resource_id} gone before deployment")
                )
                return
            tdd = build_deployment(
                self.graph,
                ex,
                addresses,
                self.python_artifacts,
                self.blob_server_address,
                job_config=self.job_config,
                restore=restores.get(execution_id),
            )
            try:
                await tm.gateway.submit_task(tdd, self.fencing_token or "")
            except FlottError as e:
                self._handle(
                    TaskStateChanged(
                        execution_id, ExecutionState.FAILED, error_to_wire(e), "deployment failed"
                    )
                )

        await asyncio.gather(*(deploy_one(eid) for eid in execution_ids))

    async def _release_partitions(self, action: ReleasePartitions) -> None:
        tm = self._task_managers.get(action.resource_id)
        if tm is not None:
            with contextlib.suppress(FlottError):
                await tm.gateway.release_partitions(action.partition_ids)

    async def _cancel_task(self, action: CancelTask) -> None:
        tm = self._task_managers.get(action.resource_id)
        if tm is None:
            self._handle(
                TaskStateChanged(
                    action.execution_id, ExecutionState.CANCELED, None, "task executor already gone"
                )
            )
            return
        try:
            await tm.gateway.cancel_task(action.execution_id)
        except JobNotFoundError:
            pass  # the task ended on its own; its final state report is on the way
        except RpcError as e:
            self._handle(
                TaskExecutorLost(
                    action.resource_id,
                    f"TaskExecutor {action.resource_id} lost: cancelling a task failed: {e}",
                )
            )

    def _reached_terminal(self) -> None:
        """Globally terminal: no event changes the job any more; release and report in the background."""
        if self._terminated:
            return
        self._terminated = True
        self._terminal_event.set()
        if self.checkpointing is not None:
            self.checkpointing.shutdown(f"job reached {self.graph.status.name}")
        self._spawn(self._release_and_report())

    async def _release_and_report(self) -> None:
        """Slots go back before the result is reported: whoever waits for the result may submit
        the next job at once and finds them free."""
        with contextlib.suppress(FlottError):
            await self._rm.cancel_slot_request(self.job_graph.job_id)
        for rid, alloc in list(self.graph.slots.values()):
            tm = self._task_managers.get(rid)
            if tm is not None:
                with contextlib.suppress(FlottError):
                    await tm.gateway.free_slot(
                        alloc, f"job {self.job_graph.job_id} reached {self.graph.status.name}"
                    )
        info = self.execution_graph_info()
        ts = self.graph.status_timestamps
        start = ts.get("RUNNING", ts.get("CREATED", 0))
        result = JobResult(
            job_id=self.job_graph.job_id,
            status=self.graph.status.name,
            net_runtime_ms=max(0, now_ms() - start),
            failure=self.graph.failure if self.graph.status is JobStatus.FAILED else None,
            accumulator_results=dict(self.accumulators) if self.graph.status is JobStatus.FINISHED else {},
        )
        if self.job_log is not None:
            await self.job_log.close(self.graph.status.name)  # complete before the job counts as ended
        self._on_terminal(result, info)

    async def _slot_deadline(self, attempt: int) -> None:
        """Fail the attempt if its slots do not come in time; meanwhile re-declare what is missing
        (when: :mod:`~flott.runtime.jobmaster.slot_request_deadline`)."""
        loop = asyncio.get_running_loop()
        wait = SlotRequestDeadline(attempt, self._slot_timeout, _REDECLARE_SLOTS_S, loop.time())
        while True:
            await asyncio.sleep(max(0.0, wait.next_check(loop.time()) - loop.time()))
            g = self.graph
            check = SlotCheck(g.status is JobStatus.RUNNING, g.num_restarts, g.slots_needed, len(g.slots))
            action = wait.handle(check, loop.time())
            if isinstance(action, StopWaiting):
                return
            if isinstance(action, SlotRequestTimedOut):
                err = NoResourceAvailableError(action.message)
                self._handle(GlobalFailure(error_to_wire(err), "slot request timed out"))
                return
            with contextlib.suppress(FlottError):
                await self._rm.cancel_slot_request(self.job_graph.job_id)
                await self._rm.request_slots(
                    self.job_graph.job_id,
                    self._rpc.address,
                    self.endpoint_id,
                    self.fencing_token or "",
                    action.missing,
                )

    async def _task_manager_timed_out(self, timed_out: TargetTimedOut) -> None:
        tm = self._task_managers.pop(timed_out.target_id, None)
        if tm is not None:
            self._rpc.close_connection(tm.address)
        self._handle(TaskExecutorLost(timed_out.target_id, timed_out.message))

    # -- RPC methods ---------------------------------------------------------------------------

    async def offer_slots(
        self, resource_id: str, task_executor_address: str, data_address: str, offers: list[SlotOffer]
    ) -> list[SlotOffer]:
        if resource_id not in self._task_managers:
            self._task_managers[resource_id] = _TaskManagerEntry(
                resource_id,
                task_executor_address,
                data_address,
                self._rpc.connect(task_executor_address, TASK_EXECUTOR_ENDPOINT, TaskExecutorGateway),
            )
            self._heartbeats.handle(
                TargetRegistered(resource_id, f"TaskExecutor {resource_id} ({task_executor_address})"),
                self._clock(),
            )
        accepted = []
        for offer in offers:
            free = self.graph.free_slot_numbers()
            if not free or self.graph.status not in (JobStatus.RUNNING, JobStatus.RESTARTING):
                break
            accepted.append(offer)
            self._handle(SlotAssigned(free[0], resource_id, offer.allocation_id))
        return accepted

    async def update_task_execution_state(self, state: TaskExecutionState) -> bool:
        if state.execution_id not in self.graph.executions:
            return False
        if state.metrics is not None:
            self.metrics[state.execution_id] = state.metrics
        if state.accumulators and state.state is ExecutionState.FINISHED:
            self.accumulators.update(state.accumulators)
        self._handle(
            TaskStateChanged(state.execution_id, state.state, state.error, result_bytes=state.result_bytes)
        )
        return True

    async def heartbeat_from_task_executor(self, heartbeat: TaskExecutorToJobManagerHeartbeat) -> None:
        """A TaskExecutor this JobMaster has written off (heartbeat timeout, lost by the
        ResourceManager) is told so: it cancels what it still runs of this job and frees the slots,
        instead of running tasks nobody supervises next to their replacements."""
        tm = self._task_managers.get(heartbeat.resource_id)
        if tm is None:
            raise TaskExecutorLostError(
                f"TaskExecutor {heartbeat.resource_id} is no longer connected to the JobMaster of job "
                f"{self.job_graph.job_id}"
            )
        self._heartbeats.handle(HeartbeatReceived(heartbeat.resource_id), self._clock())
        for m in heartbeat.tasks:
            self.metrics[m.execution_id] = m

    async def report_task_output(self, batch: TaskOutputBatch) -> bool:
        """A task's output for the job's log (any attempt's: the one before a failure matters)."""
        return self.job_log is not None and self.job_log.append_task_output(batch)

    async def disconnect_task_manager(self, resource_id: str, cause: str) -> None:
        tm = self._task_managers.pop(resource_id, None)
        self._heartbeats.handle(TargetUnregistered(resource_id), self._clock())
        if tm is not None:
            self._rpc.close_connection(tm.address)
        self._handle(TaskExecutorLost(resource_id, cause))

    async def cancel(self) -> None:
        self.request_cancel()

    def request_cancel(self) -> None:
        """Cancel the job (synchronous: the cancellations of its tasks go out in the background)."""
        self._handle(CancelJob())

    async def request_job(self) -> ExecutionGraphInfo:
        return self.execution_graph_info()

    # -- checkpoints ---------------------------------------------------------------------------

    def _require_checkpointing(self, what: str) -> CheckpointCoordinatorDriver:
        if self.checkpointing is None:
            raise CheckpointTriggerError(
                f"{what} is not possible for job {self.job_graph.job_id}: it runs in BATCH mode, "
                "which takes no checkpoints (a failed BATCH job is re-run from its sources)"
            )
        return self.checkpointing

    async def acknowledge_checkpoint(
        self, execution_id: str, checkpoint_id: int, snapshot: TaskStateSnapshot
    ) -> None:
        if self.checkpointing is not None:
            self.checkpointing.acknowledge(execution_id, checkpoint_id, snapshot)

    async def decline_checkpoint(self, execution_id: str, checkpoint_id: int, reason: str) -> None:
        if self.checkpointing is not None:
            self.checkpointing.decline(execution_id, checkpoint_id, reason)

    async def trigger_savepoint(self, target_directory: str | None, cancel_job: bool) -> str:
        path = await self._require_checkpointing("a savepoint").trigger_savepoint(target_directory)
        if cancel_job:
            self._handle(CancelJob("cancel with savepoint"))
        return path

    async def stop_with_savepoint(self, target_directory: str | None, drain: bool) -> str:
        """The savepoint is taken synchronously with the sources; they end after it completed."""
        driver = self._require_checkpointing("stop-with-savepoint")
        path = await driver.trigger_savepoint(target_directory, sync=True, drain=drain)
        await self._terminal_event.wait()
        return path

    async def trigger_checkpoint(self) -> int:
        return await self._require_checkpointing("a checkpoint").trigger_checkpoint()

    async def deliver_coordination_request(self, operator_id: str, request: bytes) -> bytes:
        # deferred: runs flott.runtime.operators' package init (every operator), ~170 ms of the
        # JobManager's start-up, for collect jobs only
        from flott.runtime.operators.collect.coordinator import forward_coordination_request

        def gateway_of(resource_id: str) -> TaskExecutorGateway | None:
            tm = self._task_managers.get(resource_id)
            return tm.gateway if tm is not None else None

        return await forward_coordination_request(
            self.graph.job_graph, list(self.graph.executions.values()), gateway_of, operator_id, request
        )

    async def request_checkpoint_statistics(self) -> dict[str, Any]:
        if self.checkpointing is None:
            return {}
        return self.checkpointing.coordinator.checkpoint_statistics()

    def checkpoint_config_info(self) -> dict[str, Any]:
        """``GET /jobs/:id/checkpoints/config`` in Flink's CheckpointConfigInfo shape."""
        driver = self._require_checkpointing("checkpoint configuration")
        c = driver.config
        backend = self.job_config.get("state.backend.type", "hashmap").strip().lower()
        return {
            "mode": "exactly_once",
            "interval": c.interval_ms if c.interval_ms is not None else 0x7FFFFFFFFFFFFFFF,
            "timeout": c.timeout_ms,
            "min_pause": c.min_pause_ms,
            "max_concurrent": c.max_concurrent,
            "externalization": {"enabled": True, "delete_on_cancellation": False},
            "state_backend": "EmbeddedRocksDBStateBackend" if backend == "rocksdb" else "HashMapStateBackend",
            "checkpoint_storage": "FileSystemCheckpointStorage",
            "unaligned_checkpoints": any(
                str(self.job_config.get(f"execution.checkpointing.unaligned.{k}", "")).strip().lower()
                == "true"
                for k in ("enabled", "forced")
            )
            and str(self.job_config.get("execution.checkpointing.mode", "EXACTLY_ONCE")).strip().upper()
            != "AT_LEAST_ONCE",
            "tolerable_failed_checkpoints": c.tolerable_failures if c.tolerable_failures is not None else -1,
            "aligned_checkpoint_timeout": 0,
            "checkpoints_after_tasks_finish": True,
            "state_changelog_enabled": False,
        }

    async def wait_terminal(self) -> None:
        await self._terminal_event.wait()

    # -- views ---------------------------------------------------------------------------------

    def job_details(self) -> JobDetails:
        """The job's row of ``/jobs/overview``, without building the per-vertex details.

        The same values as ``job_details(self.execution_graph_info())`` of the
        Dispatcher: task counts per ExecutionState summed over all vertices.
        """
        g = self.graph
        now = now_ms()
        ts = g.status_timestamps
        start = ts.get("CREATED", now)
        terminal = g.status in (JobStatus.FINISHED, JobStatus.FAILED, JobStatus.CANCELED)
        end = ts.get(g.status.name, now) if terminal else -1
        vertices = g.job_graph.vertices
        counts: dict[str, int] = dict.fromkeys(ExecutionState.__members__, 0) if vertices else {}
        for v in vertices:
            for ex in g.by_vertex[v.id]:
                counts[ex.state.name] += 1
        return JobDetails(
            job_id=self.job_graph.job_id,
            job_name=self.job_graph.job_name,
            status=g.status.name,
            start_time=start,
            end_time=end,
            duration=(end if end > 0 else now) - start,
            last_modification=max(ts.values(), default=start),
            task_counts=counts,
            num_tasks=sum(max(0, v.parallelism) for v in vertices),
            job_type="BATCH"
            if self.job_graph.config.get("execution.runtime-mode") == "BATCH"
            else "STREAMING",
        )

    def execution_graph_info(self) -> ExecutionGraphInfo:
        g = self.graph
        now = now_ms()
        ts = g.status_timestamps
        start = ts.get("CREATED", now)
        terminal = g.status in (JobStatus.FINISHED, JobStatus.FAILED, JobStatus.CANCELED)
        end = ts.get(g.status.name, now) if terminal else -1
        vertices = []
        for v in g.job_graph.vertices:
            exs = g.by_vertex[v.id]
            counts = {s.name: 0 for s in ExecutionState}
            for ex in exs:
                counts[ex.state.name] += 1
            starts = [ex.timestamps.get("DEPLOYING", 0) for ex in exs if "DEPLOYING" in ex.timestamps]
            v_start = min(starts) if starts else -1
            v_done = all(ex.state.is_terminal() for ex in exs)
            v_end = max((max(ex.timestamps.values()) for ex in exs), default=-1) if v_done else -1
            vertices.append(
                VertexDetails(
                    id=v.id,
                    name=v.name,
                    parallelism=v.parallelism,
                    max_parallelism=v.max_parallelism,
                    status=_vertex_status(exs_states=[ex.state for ex in exs]),
                    start_time=v_start,
                    end_time=v_end,
                    duration=(v_end if v_end > 0 else now) - v_start if v_start > 0 else -1,
                    task_counts=counts,
                    records_in=sum(
                        self.metrics[ex.execution_id].records_in
                        for ex in exs
                        if ex.execution_id in self.metrics
                    ),
                    records_out=sum(
                        self.metrics[ex.execution_id].records_out
                        for ex in exs
                        if ex.execution_id in self.metrics
                    ),
                    subtask_states=[ex.state.name for ex in exs],
                    subtask_hosts=[ex.resource_id or "" for ex in exs],
                )
            )
        return ExecutionGraphInfo(
            job_id=self.job_graph.job_id,
            job_name=self.job_graph.job_name,
            status=g.status.name,
            start_time=start,
            end_time=end,
            duration=(end if end > 0 else now) - start,
            now=now,
            timestamps=dict(ts),
            vertices=vertices,
            max_parallelism=max((v.max_parallelism for v in g.job_graph.vertices), default=-1),
            job_type="BATCH"
            if self.job_graph.config.get("execution.runtime-mode") == "BATCH"
            else "STREAMING",
            failure=g.failure,
        )


def _with_default_dirs(config: CheckpointConfig) -> CheckpointConfig:
    """Checkpoints need a directory; without one configured they go under the machine's temporary
    directory (fine on one machine; a cluster over several hosts must configure a shared one)."""
    if config.checkpoints_dir:
        return config
    import dataclasses
    import tempfile

    default = os.path.join(tempfile.gettempdir(), "flott-checkpoints")
    return dataclasses.replace(config, checkpoints_dir=default)


def _vertex_status(exs_states: list[ExecutionState]) -> str:
    """Flink's aggregate: the 'most active' state across a vertex's subtasks."""
    order = [
        ExecutionState.FAILED,
        ExecutionState.CANCELING,
        ExecutionState.CANCELED,
        ExecutionState.RUNNING,
        ExecutionState.INITIALIZING,
        ExecutionState.DEPLOYING,
        ExecutionState.SCHEDULED,
        ExecutionState.CREATED,
        ExecutionState.FINISHED,
    ]
    for s in order:
        if s in exs_states:
            return s.name
    return ExecutionState.CREATED.name
