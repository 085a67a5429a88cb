"""The JobMaster's checkpointing shell: drives the pure CheckpointCoordinator with RPCs and timers.

The :class:`~flott.runtime.checkpoint.coordinator.CheckpointCoordinator` decides; this module
does the I/O around it, the way the JobMaster shell does for the ExecutionGraph:

* it tells the coordinator when every task of the current attempt is RUNNING (a checkpoint
  plan: sources trigger, every task acknowledges) and when that stops being true;
* it ticks the coordinator at :meth:`CheckpointCoordinator.next_wakeup` (periodic triggers,
  timeouts);
* it carries the coordinator's actions out: barriers injected at source tasks, completion and
  abort notifications to every task, savepoint/checkpoint requests resolved, ``FailJob`` turned
  into a global failure of the job;
* it runs the coordinator's storage actions (``_metadata`` writes, checkpoint directory
  deletions) on a worker thread of its own, one at a time in the order they were emitted, and
  feeds each outcome back as an event: fsspec I/O (S3 included) never blocks the JobMaster's
  event loop, and a checkpoint's directory is never deleted before its metadata write ended;
* it plans restores: which subtask reads which files of the snapshot a (re)started attempt
  starts from (the latest completed checkpoint after a failover, else the savepoint the job
  was submitted with), from the snapshot's metadata alone: no state is read here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from flott.common.job_status import JobStatus
from flott.errors import FlottError
from flott.runtime.checkpoint.coordinator import (
    AcknowledgeCheckpoint,
    CheckpointCompleted,
    CheckpointConfig,
    CheckpointCoordinator,
    CheckpointFailed,
    CheckpointPlan,
    DeclineCheckpoint,
    DiscardCheckpoint,
    Event,
    FailJob,
    JobNotRunning,
    JobRunning,
    NotifyCheckpointAborted,
    NotifyCheckpointComplete,
    RestoredFrom,
    Shutdown,
    Tick,
    TriggerCheckpoint,
    TriggerCheckpointBarrier,
    TriggerSavepoint,
    WriteCheckpointMetadata,
    perform_storage_action,
)
from flott.runtime.checkpoint.errors import (
    CheckpointError,
    CheckpointFailureLimitExceededError,
    IllegalCheckpointTransitionError,
)
from flott.runtime.checkpoint.metadata import TaskStateSnapshot
from flott.runtime.checkpoint.restore import SnapshotToRestore, restore_assignment
from flott.runtime.checkpoint.storage import CheckpointStorage
from flott.runtime.gateways.task_executor_gateway import TaskExecutorGateway
from flott.runtime.jobgraph import JobGraph, new_id
from flott.runtime.jobmaster.execution_graph import Execution, ExecutionGraph
from flott.runtime.messages.execution import ExecutionState, OperatorRestore, TaskRestore

if TYPE_CHECKING:
    from flott.runtime.highavailability.services import CheckpointRecorder

log = logging.getLogger(__name__)

SAVEPOINT_PATH_KEY = "execution.savepoint.path"
ALLOW_NON_RESTORED_STATE_KEY = "execution.savepoint.ignore-unclaimed-state"

_IDLE_TICK_S = 1.0
"""With nothing scheduled the timer still wakes this often (cheap; covers a missed wake-up)."""


def now_ms() -> int:
    return int(time.time() * 1000)


class CheckpointCoordinatorDriver:
    """Owns a job's CheckpointCoordinator on the JobMaster's event loop; see the module docstring."""

    def __init__(
        self,
        job_graph: JobGraph,
        graph: Callable[[], ExecutionGraph],
        config: CheckpointConfig,
        storage: CheckpointStorage,
        task_executor: Callable[[str], TaskExecutorGateway | None],
        spawn: Callable[[Coroutine[Any, Any, None]], None],
        fail_job: Callable[[FlottError], Coroutine[Any, Any, None]],
        initial_snapshot: SnapshotToRestore | None = None,
        recorder: CheckpointRecorder | None = None,
        first_checkpoint_id: int = 1,
    ) -> None:
        """``recorder`` (HA mode): completed checkpoints are recorded there before any task is
        notified; ``first_checkpoint_id``: ids continue after those of an earlier leader."""
        self.job_graph = job_graph
        self._graph = graph
        self.config = config
        self.storage = storage
        self.coordinator = CheckpointCoordinator(
            job_graph.job_id, config, first_checkpoint_id=first_checkpoint_id
        )
        self._io: concurrent.futures.ThreadPoolExecutor | None = None
        """One worker thread: storage actions run in emission order (created on first use)."""
        self._recorder = recorder
        self._task_executor = task_executor
        self._spawn = spawn
        self._fail_job = fail_job
        self._initial = initial_snapshot
        self._waiters: dict[str, asyncio.Future[tuple[int, str]]] = {}
        self._wake = asyncio.Event()
        self._running_attempt: int | None = None
        """The attempt (restart count) the coordinator currently has a plan for."""

    # -- the coordinator ----------------------------------------------------------------------

    def _handle(self, event: Event) -> None:
        actions = self.coordinator.handle(event, now_ms())
        if self._recorder is not None:
            actions = self._record_first(actions)
        for action in actions:
            if isinstance(action, TriggerCheckpointBarrier):
                if self._recorder is not None:
                    self._recorder.checkpoint_triggered(action.checkpoint_id)
                self._spawn(self._trigger_barrier(action))
            elif isinstance(action, NotifyCheckpointComplete):
                self._spawn(self._notify(action.execution_ids, action.checkpoint_id, True, action.final))
            elif isinstance(action, NotifyCheckpointAborted):
                self._spawn(self._notify(action.execution_ids, action.checkpoint_id, False, False))
            elif isinstance(action, CheckpointCompleted):
                log.info(
                    "job %s: %s %d completed at %s",
                    self.job_graph.job_id,
                    action.checkpoint_type.lower(),
                    action.checkpoint_id,
                    action.external_path,
                )
                self._resolve(action.request_id, (action.checkpoint_id, action.external_path), None)
            elif isinstance(action, CheckpointFailed):
                log.info(
                    "job %s: %s %d failed: %s",
                    self.job_graph.job_id,
                    action.checkpoint_type.lower(),
                    action.checkpoint_id,
                    action.reason,
                )
                self._resolve(action.request_id, None, CheckpointError(action.reason))
            elif isinstance(action, FailJob):
                self._spawn(self._fail_job(CheckpointFailureLimitExceededError(action.reason)))
            elif isinstance(action, (WriteCheckpointMetadata, DiscardCheckpoint)):
                self._run_storage_action(action)
        self._wake.set()

    def _run_storage_action(self, action: WriteCheckpointMetadata | DiscardCheckpoint) -> None:
        if self._io is None:
            self._io = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix=f"checkpoint-io-{self.job_graph.job_id[:8]}"
            )
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._io, perform_storage_action, self.storage, action)
        future.add_done_callback(self._storage_action_done)

    def _storage_action_done(self, future: asyncio.Future[Event]) -> None:
        if future.cancelled():
            return
        error = future.exception()
        if error is not None:  # perform_storage_action reports storage errors as events
            log.error("job %s: checkpoint storage action failed: %r", self.job_graph.job_id, error)
            return
        event = future.result()
        try:
            self._handle(event)
        except FlottError as e:
            log.warning("job %s: %s not applied: %s", self.job_graph.job_id, type(event).__name__, e)

    def _record_first(self, actions: list[Any]) -> list[Any]:
        """HA: a completed checkpoint's notification and completion go out only once the recorder
        stored it (a task that commits on the notification must never be ahead of what a new
        leader restores). The rest of the actions are carried out at once."""
        completed = {a.checkpoint_id: a for a in actions if isinstance(a, CheckpointCompleted)}
        if not completed:
            return actions
        held = [
            a for a in actions
            if isinstance(a, (NotifyCheckpointComplete, CheckpointCompleted)) and a.checkpoint_id in completed
        ]  # fmt: skip
        for cid, done in completed.items():
            self._spawn(self._record_then_release(done, [a for a in held if a.checkpoint_id == cid]))
        return [a for a in actions if not any(a is h for h in held)]

    async def _record_then_release(self, done: CheckpointCompleted, held: list[Any]) -> None:
        assert self._recorder is not None
        try:
            await self._recorder.checkpoint_completed(
                done.checkpoint_id, done.external_path, done.checkpoint_type
            )
        except Exception as e:  # deposed, or the store is unreachable: nobody may commit it
            log.warning(
                "job %s: checkpoint %d completed but could not be recorded (%s); not committing it",
                self.job_graph.job_id, done.checkpoint_id, e,
            )
            self._resolve(done.request_id, None, CheckpointError(f"checkpoint could not be recorded: {e}"))
            return
        for action in held:
            if isinstance(action, NotifyCheckpointComplete):
                self._spawn(self._notify(action.execution_ids, action.checkpoint_id, True, action.final))
            else:
                log.info(
                    "job %s: %s %d completed at %s (recorded)",
                    self.job_graph.job_id, action.checkpoint_type.lower(), action.checkpoint_id,
                    action.external_path,
                )
                self._resolve(action.request_id, (action.checkpoint_id, action.external_path), None)

    def _resolve(
        self, request_id: str | None, value: tuple[int, str] | None, error: Exception | None
    ) -> None:
        if request_id is None:
            return
        waiter = self._waiters.pop(request_id, None)
        if waiter is None or waiter.done():
            return
        if error is not None:
            waiter.set_exception(error)
        else:
            assert value is not None
            waiter.set_result(value)

    def _execution(self, execution_id: str) -> Execution | None:
        return self._graph().executions.get(execution_id)

    async def _trigger_barrier(self, action: TriggerCheckpointBarrier) -> None:
        async def one(execution_id: str) -> None:
            ex = self._execution(execution_id)
            gateway = self._task_executor(ex.resource_id) if ex is not None and ex.resource_id else None
            try:
                if gateway is None:
                    raise CheckpointError(f"task {execution_id} is not running")
                await gateway.trigger_checkpoint(
                    execution_id,
                    action.checkpoint_id,
                    action.timestamp,
                    action.checkpoint_type,
                    action.location,
                    action.drain,
                )
            except FlottError as e:
                self.decline(execution_id, action.checkpoint_id, f"could not trigger: {e}")

        await asyncio.gather(*(one(eid) for eid in action.execution_ids))

    async def _notify(
        self, execution_ids: tuple[str, ...], checkpoint_id: int, complete: bool, final: bool
    ) -> None:
        async def one(execution_id: str) -> None:
            ex = self._execution(execution_id)
            if ex is None or ex.resource_id is None or ex.state.is_terminal():
                return
            gateway = self._task_executor(ex.resource_id)
            if gateway is None:
                return
            try:
                if complete:
                    await gateway.notify_checkpoint_complete(execution_id, checkpoint_id, final)
                else:
                    await gateway.notify_checkpoint_aborted(execution_id, checkpoint_id)
            except FlottError as e:  # the task may be gone; a failover will follow if it matters
                log.debug("notifying %s of checkpoint %d failed: %s", execution_id, checkpoint_id, e)

        await asyncio.gather(*(one(eid) for eid in execution_ids))

    # -- the job's state ----------------------------------------------------------------------

    def on_graph_changed(self) -> None:
        """Called after every ExecutionGraph event: start or stop checkpointing the current attempt."""
        g = self._graph()
        all_running = g.status is JobStatus.RUNNING and all(
            ex.state is ExecutionState.RUNNING for ex in g.executions.values()
        )
        if all_running and self._running_attempt != g.num_restarts:
            if self._running_attempt is not None:
                self._handle(JobNotRunning("a new attempt started"))
            sources = tuple(
                ex.execution_id for v in self.job_graph.vertices if v.is_source for ex in g.by_vertex[v.id]
            )
            if not sources:
                return
            plan = CheckpointPlan(
                tasks_to_trigger=sources,
                tasks_to_ack={ex.execution_id: ex.vertex_id for ex in g.executions.values()},
            )
            self._running_attempt = g.num_restarts
            self._handle(JobRunning(plan))
        elif not all_running and self._running_attempt is not None:
            self._running_attempt = None
            self._handle(JobNotRunning(why_checkpoints_stop(g)))

    async def run_timer(self) -> None:
        """Tick the coordinator when it has something due (the JobMaster runs this in the background)."""
        while not self.coordinator.shut_down:
            wakeup = self.coordinator.next_wakeup()
            delay = (
                _IDLE_TICK_S if wakeup is None else min(_IDLE_TICK_S, max(0.0, (wakeup - now_ms()) / 1000))
            )
            self._wake.clear()
            if delay > 0:
                try:
                    async with asyncio.timeout(delay):
                        await self._wake.wait()
                    continue  # something changed: recompute the wake-up time
                except TimeoutError:
                    pass
            else:
                await asyncio.sleep(0.001)  # never spin the loop, whatever next_wakeup says
            try:
                self._handle(Tick())
            except FlottError as e:  # e.g. no checkpoint directory configured: say so, keep running
                log.warning("job %s: periodic checkpoint not triggered: %s", self.job_graph.job_id, e)
                await asyncio.sleep(_IDLE_TICK_S)

    def shutdown(self, reason: str) -> None:
        self._handle(Shutdown(reason))
        for waiter in self._waiters.values():
            if not waiter.done():
                waiter.set_exception(CheckpointError(f"job master shut down: {reason}"))
        self._waiters.clear()
        if self._io is not None:
            # Queued deletions still run (leftover directories are garbage); nothing new is accepted.
            self._io.shutdown(wait=False)

    # -- task messages ------------------------------------------------------------------------

    def acknowledge(self, execution_id: str, checkpoint_id: int, snapshot: TaskStateSnapshot) -> None:
        if execution_id not in self._graph().executions:
            return  # an ack of a task of an earlier attempt
        try:
            self._handle(AcknowledgeCheckpoint(checkpoint_id, execution_id, snapshot))
        except IllegalCheckpointTransitionError as e:
            log.debug("job %s: ignoring acknowledgement: %s", self.job_graph.job_id, e)

    def decline(self, execution_id: str, checkpoint_id: int, reason: str) -> None:
        if execution_id not in self._graph().executions:
            return
        try:
            self._handle(DeclineCheckpoint(checkpoint_id, execution_id, reason))
        except IllegalCheckpointTransitionError as e:
            log.debug("job %s: ignoring decline: %s", self.job_graph.job_id, e)

    # -- requests -----------------------------------------------------------------------------

    async def _request(self, event: TriggerSavepoint | TriggerCheckpoint, request_id: str) -> tuple[int, str]:
        waiter: asyncio.Future[tuple[int, str]] = asyncio.get_running_loop().create_future()
        self._waiters[request_id] = waiter
        try:
            self._handle(event)
        except BaseException:
            self._waiters.pop(request_id, None)
            raise
        return await waiter

    async def trigger_savepoint(
        self, target_directory: str | None, *, sync: bool = False, drain: bool = False
    ) -> str:
        request_id = new_id()
        event = TriggerSavepoint(target_directory, request_id, sync=sync, drain=drain)
        _, path = await self._request(event, request_id)
        return path

    async def trigger_checkpoint(self) -> int:
        request_id = new_id()
        checkpoint_id, _ = await self._request(TriggerCheckpoint(request_id), request_id)
        return checkpoint_id

    # -- restore ------------------------------------------------------------------------------

    def snapshot_to_restore(self) -> SnapshotToRestore | None:
        """The latest completed checkpoint wins over the savepoint the job was started from."""
        latest = self.coordinator.latest_completed()
        if latest is not None:
            return SnapshotToRestore(latest.metadata, latest.external_path, allow_non_restored=True)
        return self._initial

    def plan_restore(self, executions: list[Execution]) -> dict[str, TaskRestore]:
        """Execution id -> what it restores, for a (re)started attempt; empty for a fresh start."""
        snapshot = self.snapshot_to_restore()
        if snapshot is None:
            return {}
        parallelism: dict[str, int] = {}
        for v in self.job_graph.vertices:
            for op in v.operators:
                parallelism[op.operator_id] = v.parallelism
                if op.uid:
                    parallelism[op.uid] = v.parallelism
        plan = restore_assignment(
            snapshot.metadata,
            parallelism,
            snapshot.external_path,
            allow_non_restored_state=snapshot.allow_non_restored,
        )
        if not snapshot.reported:
            snapshot.reported = True
            self._handle(
                RestoredFrom(
                    snapshot.metadata.checkpoint_id,
                    snapshot.external_path,
                    snapshot.metadata.is_savepoint,
                    snapshot.metadata,
                    tuple(snapshot.older_checkpoints),
                )
            )
        out: dict[str, TaskRestore] = {}
        for ex in executions:
            vertex = self.job_graph.vertex(ex.vertex_id)
            operators: dict[str, OperatorRestore] = {}
            for op in vertex.operators:
                subtasks = plan.get(op.operator_id)
                if not subtasks:
                    continue
                r = subtasks[ex.subtask_index]
                operators[op.operator_id] = OperatorRestore(
                    key_group_files=list(r.key_group_files),
                    operator_state=[(s.path, s.state_name, s.start, s.end) for s in r.operator_state],
                    union_state_files=list(r.union_state_files),
                    incremental=list(r.incremental),
                    channel_state=r.channel_state,
                )
            out[ex.execution_id] = TaskRestore(
                snapshot.metadata.checkpoint_id, snapshot.external_path, operators
            )
        return out




def why_checkpoints_stop(graph: ExecutionGraph) -> str:
    """Why checkpoints stop: the job's status, or which of a RUNNING job's tasks are not running.

    A job stays RUNNING while some tasks already finished (a bounded source ended); saying only
    "job is RUNNING" there reads as a contradiction.
    """
    if graph.status is not JobStatus.RUNNING:
        return f"job is {graph.status.name}"
    executions = graph.executions.values()
    others = Counter(ex.state.name for ex in executions if ex.state is not ExecutionState.RUNNING)
    states = ", ".join(f"{n} {state}" for state, n in sorted(others.items()))
    return f"not all tasks are running ({states} of {len(graph.executions)})"
