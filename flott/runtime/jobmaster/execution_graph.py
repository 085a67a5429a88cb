"""The ExecutionGraph: a job's subtasks and their states, as a pure state machine.

Events go in (:meth:`ExecutionGraph.handle`), actions come out; no sockets, no
clock, no asyncio. The JobMaster's async shell feeds it events (slot offers,
task state reports, lost TaskExecutors, cancel requests) and carries out the
actions (deploy, cancel a task, report the job's status). Each event carries
a ``stimulus`` string so a job's history can say why it changed.

Job states follow Flink: CREATED → RUNNING → FINISHED; cancel → CANCELLING →
CANCELED. A failure (a task FAILED, a TaskExecutor lost, a global failure such as
too many failed checkpoints) asks the restart strategy: if it allows a restart
and the error is recoverable, RUNNING → RESTARTING, every task is cancelled,
and once all are terminal the graph asks the shell to wait the backoff
(:class:`ScheduleRestart`); :class:`RestartJob` then creates a new attempt of
every subtask (global failover: the shell restores them all from the latest
completed checkpoint) and the job is RUNNING again. Otherwise → FAILING →
(all tasks terminal) FAILED.

A BATCH job run by the adaptive batch scheduler (an :class:`AdaptiveBatchPlan` given) is
scheduled in stages: a vertex's subtasks exist only once its parallelism is decided, and are
deployed only once every producer of every input finished (the exchanges are blocking). When
the last producer of a vertex whose parallelism is still open finishes, the plan decides it
from the bytes the producers reported; slots are asked for as the decided vertices need them.
A failure restarts the whole job (every vertex, from the sources), keeping the parallelism
already decided; finished results are not reused. A lost TaskExecutor that holds finished
results someone has still to read is a failure too.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from flott.common.job_status import JobStatus
from flott.errors import IllegalStateTransitionError, TaskExecutorLostError
from flott.runtime.jobgraph import JobGraph, new_id
from flott.runtime.messages.execution import ExecutionState
from flott.runtime.rpc.service import WireError, error_to_wire
from flott.runtime.scheduler.adaptivebatch.vertex_parallelism_decider import ConsumedResult

if TYPE_CHECKING:
    from flott.runtime.scheduler.adaptivebatch.adaptive_batch_plan import AdaptiveBatchPlan

_ES = ExecutionState
_ECHO = "DataExchangeError"

# Legal moves of one execution (attempt) of a subtask.
_EXECUTION_TRANSITIONS: dict[ExecutionState, set[ExecutionState]] = {
    _ES.CREATED: {_ES.SCHEDULED, _ES.CANCELED, _ES.FAILED},
    _ES.SCHEDULED: {_ES.DEPLOYING, _ES.CANCELED, _ES.FAILED},
    _ES.DEPLOYING: {_ES.INITIALIZING, _ES.RUNNING, _ES.FINISHED, _ES.CANCELING, _ES.CANCELED, _ES.FAILED},
    _ES.INITIALIZING: {_ES.RUNNING, _ES.FINISHED, _ES.CANCELING, _ES.CANCELED, _ES.FAILED},
    _ES.RUNNING: {_ES.FINISHED, _ES.CANCELING, _ES.CANCELED, _ES.FAILED},
    _ES.CANCELING: {_ES.CANCELED, _ES.FAILED, _ES.FINISHED},
    _ES.FINISHED: set(),
    _ES.CANCELED: set(),
    _ES.FAILED: set(),
    _ES.RECONCILING: set(),
}

_JS = JobStatus
_JOB_TRANSITIONS: dict[JobStatus, set[JobStatus]] = {
    _JS.CREATED: {_JS.RUNNING, _JS.FAILING, _JS.FAILED, _JS.CANCELLING, _JS.CANCELED},
    _JS.RUNNING: {_JS.FINISHED, _JS.FAILING, _JS.CANCELLING, _JS.RESTARTING},
    _JS.RESTARTING: {_JS.RUNNING, _JS.CANCELLING, _JS.CANCELED, _JS.FAILING, _JS.FAILED},
    _JS.FAILING: {_JS.FAILED},
    _JS.CANCELLING: {_JS.CANCELED, _JS.FAILED},
    _JS.FINISHED: set(),
    _JS.FAILED: set(),
    _JS.CANCELED: set(),
}


@dataclass
class Execution:
    """One attempt of one subtask."""

    execution_id: str
    vertex_id: str
    subtask_index: int
    attempt_number: int
    state: ExecutionState = ExecutionState.CREATED
    resource_id: str | None = None
    allocation_id: str | None = None
    timestamps: dict[str, int] = field(default_factory=dict)
    failure: WireError | None = None
    result_bytes: dict[str, int] = field(default_factory=dict)
    """Once FINISHED in a blocking exchange: bytes written per output edge id."""


@dataclass(frozen=True)
class FailureRecord:
    """One entry of the job's exception history: a failure that made the job restart or fail.

    ``execution_id`` names the failed attempt (None for a global failure, e.g. too many failed
    checkpoints); ``attempt`` is the job attempt it ended (0 for the first run), so the other
    failures of that attempt are its concurrent exceptions.
    """

    error: WireError
    timestamp: int
    attempt: int
    execution_id: str | None = None


ATTEMPTS_HISTORY_SIZE = 16
"""Prior attempts kept per subtask (Flink's ``jobmanager.execution.attempts-history-size``)."""
EXCEPTION_HISTORY_SIZE = 16
"""Failures kept in the exception history (Flink's ``web.exception-history-size``)."""


# -- events -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class StartScheduling:
    stimulus: str = "job submitted"


@dataclass(frozen=True)
class SlotAssigned:
    """Slot ``slot_number`` (0-based within the job's slot-sharing group) is on ``resource_id``."""

    slot_number: int
    resource_id: str
    allocation_id: str
    stimulus: str = "slot offered"


@dataclass(frozen=True)
class TaskStateChanged:
    execution_id: str
    state: ExecutionState
    error: WireError | None = None
    stimulus: str = "task report"
    result_bytes: Mapping[str, int] | None = None
    """With FINISHED: bytes written into each blocking output (edge id → bytes)."""


@dataclass(frozen=True)
class TaskExecutorLost:
    resource_id: str
    cause: str
    stimulus: str = "task executor lost"


@dataclass(frozen=True)
class CancelJob:
    stimulus: str = "cancel requested"


@dataclass(frozen=True)
class GlobalFailure:
    error: WireError
    stimulus: str = "global failure"
    restartable: bool = True
    """False: fail the job whatever the restart strategy says (e.g. a restore that cannot work)."""


@dataclass(frozen=True)
class RestartJob:
    """The backoff of a :class:`ScheduleRestart` passed: start a new attempt of every subtask."""

    stimulus: str = "restart backoff passed"


Event = (
    StartScheduling | SlotAssigned | TaskStateChanged | TaskExecutorLost | CancelJob | GlobalFailure
    | RestartJob
)  # fmt: skip


class RestartPolicy(Protocol):
    """What the graph needs of a restart strategy (flott.runtime.executiongraph.failover)."""

    def notify_failure(self, now_ms: int) -> None: ...

    def can_restart(self) -> bool: ...

    def backoff_time_ms(self) -> int: ...

# -- actions ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RequestSlots:
    count: int


@dataclass(frozen=True)
class DeployTasks:
    execution_ids: list[str]


@dataclass(frozen=True)
class CancelTask:
    execution_id: str
    resource_id: str


@dataclass(frozen=True)
class JobStatusChanged:
    old: JobStatus
    new: JobStatus
    failure: WireError | None
    stimulus: str


@dataclass(frozen=True)
class ReleasePartitions:
    """Drop the blocking results finished producers left on ``resource_id`` for a failed attempt."""

    resource_id: str
    partition_ids: list[str]


@dataclass(frozen=True)
class ScheduleRestart:
    """All tasks of the failed attempt are terminal: send :class:`RestartJob` after ``delay_ms``."""

    delay_ms: int


Action = RequestSlots | DeployTasks | CancelTask | JobStatusChanged | ScheduleRestart | ReleasePartitions


def partition_id(job_id: str, edge_id: str, producer: Execution) -> str:
    """Flink's ResultPartitionID: (intermediate data set, producer subtask) + the producer attempt."""
    return f"{job_id}.{edge_id}.{producer.subtask_index}.{producer.attempt_number}"


class ExecutionGraph:
    """States of a job and its subtasks; see the module docstring."""

    def __init__(
        self,
        job_graph: JobGraph,
        now_ms: int = 0,
        *,
        restart_policy: RestartPolicy | None = None,
        is_recoverable: Callable[[str], bool] = lambda error_type: True,
        adaptive: AdaptiveBatchPlan | None = None,
    ) -> None:
        """Without a ``restart_policy`` every failure fails the job (Flink's ``none``).

        ``adaptive``: the BATCH job runs staged with blocking exchanges, ``job_graph`` then being
        the effective graph of the plan (undecided vertices have parallelism -1)."""
        self.plan = adaptive
        if adaptive is not None:
            job_graph = adaptive.job_graph
        self.job_graph = job_graph
        self.status = JobStatus.CREATED
        self.failure: WireError | None = None
        self.status_timestamps: dict[str, int] = {JobStatus.CREATED.name: now_ms}
        self.restart_policy = restart_policy
        self._is_recoverable = is_recoverable
        self.num_restarts = 0
        self.last_failure: WireError | None = None
        """The cause of the latest failover (kept after a restart; ``failure`` is the job's final one)."""
        self._restart_delay_ms: int | None = None
        self.executions: dict[str, Execution] = {}
        self.by_vertex: dict[str, list[Execution]] = {}
        self.prior_attempts: dict[tuple[str, int], deque[Execution]] = {}
        """Per (vertex, subtask): the attempts before the current one, oldest first (bounded)."""
        self.exception_history: deque[FailureRecord] = deque(maxlen=EXCEPTION_HISTORY_SIZE)
        """The failures that restarted or failed the job, oldest first (bounded)."""
        self._new_attempt(0, now_ms)
        # Slot numbers: group g's i-th slot is offset[g] + i (slot sharing within a group); a
        # group's numbers are as many as its vertices may ever need.
        self._slot_offset: dict[str, int] = {}
        bounds: dict[str, int] = {}
        for v in job_graph.vertices:
            bound = adaptive.upper_bound(v.id) if adaptive is not None else v.parallelism
            bounds[v.slot_sharing_group] = max(bounds.get(v.slot_sharing_group, 0), bound)
        offset = 0
        for group, size in bounds.items():
            self._slot_offset[group] = offset
            offset += size
        self._group_of = {v.id: v.slot_sharing_group for v in job_graph.vertices}
        self.slots: dict[int, tuple[str, str]] = {}
        self.history: list[str] = []

    def _new_attempt(self, attempt: int, now_ms: int) -> None:
        for ex in self.executions.values():
            key = (ex.vertex_id, ex.subtask_index)
            kept = self.prior_attempts.get(key)
            if kept is None:
                kept = self.prior_attempts[key] = deque(maxlen=ATTEMPTS_HISTORY_SIZE)
            kept.append(ex)
        self.executions = {}
        self.by_vertex = {}
        for vertex in self.job_graph.topological_order():
            row = []
            for i in range(vertex.parallelism):
                ex = Execution(new_id(), vertex.id, i, attempt, timestamps={"CREATED": now_ms})
                self.executions[ex.execution_id] = ex
                row.append(ex)
            self.by_vertex[vertex.id] = row

    # -- queries --------------------------------------------------------------------------

    def all_terminal(self) -> bool:
        return all(ex.state.is_terminal() for ex in self.executions.values())

    @property
    def slots_needed(self) -> int:
        """Slots the job needs now: per slot-sharing group, its largest (decided) parallelism."""
        return self.job_graph.slots_needed()

    def free_slot_numbers(self) -> list[int]:
        """The slot numbers the job needs and does not hold yet, lowest first."""
        wanted = [
            self._slot_offset[group] + i
            for group, size in self.job_graph.slot_sharing_groups().items()
            for i in range(size)
        ]
        return sorted(n for n in wanted if n not in self.slots)

    def slot_number(self, execution: Execution) -> int:
        """Slot sharing: subtask i of every vertex of a group runs in that group's i-th slot."""
        return self._slot_offset[self._group_of[execution.vertex_id]] + execution.subtask_index

    def slot_of(self, execution: Execution) -> tuple[str, str]:
        return self.slots[self.slot_number(execution)]

    # -- the state machine ----------------------------------------------------------------

    def handle(self, event: Event, now_ms: int) -> list[Action]:
        self.history.append(f"{now_ms}: {type(event).__name__}: {event.stimulus}")
        if isinstance(event, StartScheduling):
            return self._on_start(now_ms)
        if isinstance(event, SlotAssigned):
            return self._on_slot(event, now_ms)
        if isinstance(event, TaskStateChanged):
            return self._on_task_state(event, now_ms)
        if isinstance(event, TaskExecutorLost):
            return self._on_te_lost(event, now_ms)
        if isinstance(event, CancelJob):
            return self._on_cancel(event, now_ms)
        if isinstance(event, RestartJob):
            return self._on_restart(event, now_ms)
        return self._fail(event.error, event.stimulus, now_ms, restartable=event.restartable)

    def _transition_job(
        self, new: JobStatus, stimulus: str, now_ms: int, failure: WireError | None = None
    ) -> list[Action]:
        old = self.status
        if new not in _JOB_TRANSITIONS[old]:
            raise IllegalStateTransitionError(f"job {self.job_graph.job_id}: {old.name} -> {new.name}")
        self.status = new
        self.status_timestamps[new.name] = now_ms
        if failure is not None and self.failure is None:
            self.failure = failure
        return [JobStatusChanged(old, new, self.failure if new is JobStatus.FAILED else failure, stimulus)]

    def _transition_execution(self, ex: Execution, new: ExecutionState, now_ms: int) -> None:
        if new not in _EXECUTION_TRANSITIONS[ex.state]:
            raise IllegalStateTransitionError(
                f"execution {ex.execution_id} ({ex.vertex_id}#{ex.subtask_index}): "
                f"{ex.state.name} -> {new.name}"
            )
        ex.state = new
        ex.timestamps[new.name] = now_ms

    def _on_start(self, now_ms: int) -> list[Action]:
        actions: list[Action] = self._transition_job(JobStatus.RUNNING, "scheduling started", now_ms)
        for ex in self.executions.values():
            self._transition_execution(ex, ExecutionState.SCHEDULED, now_ms)
        actions.append(RequestSlots(self.slots_needed))
        return actions

    def _on_slot(self, event: SlotAssigned, now_ms: int) -> list[Action]:
        if self.status is not JobStatus.RUNNING or event.slot_number in self.slots:
            return []
        self.slots[event.slot_number] = (event.resource_id, event.allocation_id)
        if self.plan is not None:
            return self._deploy_ready(now_ms)
        if len(self.slots) < self.slots_needed:
            return []
        return self._deploy_all(now_ms)

    def _deploy_all(self, now_ms: int) -> list[Action]:
        ids = []
        for ex in self.executions.values():
            ex.resource_id, ex.allocation_id = self.slot_of(ex)
            self._transition_execution(ex, ExecutionState.DEPLOYING, now_ms)
            ids.append(ex.execution_id)
        return [DeployTasks(ids)]

    def _on_task_state(self, event: TaskStateChanged, now_ms: int) -> list[Action]:
        ex = self.executions.get(event.execution_id)
        if ex is None or ex.state.is_terminal():
            return []
        if event.state is ExecutionState.FAILED:
            self._transition_execution(ex, ExecutionState.FAILED, now_ms)
            ex.failure = event.error
            if self.status in (JobStatus.RUNNING, JobStatus.CREATED):
                error = event.error or WireError(type="ClusterError", message="task failed without a cause")
                return self._fail(error, event.stimulus, now_ms, failed=ex)
            if event.error is not None:
                self._prefer_root_cause(event.error, ex)
            return self._maybe_done(now_ms)
        if ex.state is ExecutionState.CANCELING and not event.state.is_terminal():
            return []  # a late report of a task being cancelled
        self._transition_execution(ex, event.state, now_ms)
        if self.plan is not None and event.state is ExecutionState.FINISHED:
            ex.result_bytes = dict(event.result_bytes or {})
            if self.status is JobStatus.RUNNING:
                return self._schedule_consumers(now_ms) + self._maybe_done(now_ms)
        return self._maybe_done(now_ms)

    # -- staged scheduling of a BATCH job (adaptive batch scheduler) ---------------------------

    def _vertex_finished(self, vertex_id: str) -> bool:
        row = self.by_vertex[vertex_id]
        return bool(row) and all(ex.state is ExecutionState.FINISHED for ex in row)

    def _inputs_finished(self, vertex_id: str) -> bool:
        assert self.plan is not None
        return all(self._vertex_finished(e.source) for e in self.plan.inputs_of(vertex_id))

    def _schedule_consumers(self, now_ms: int) -> list[Action]:
        """Decide the vertices whose producers all finished, create their subtasks, deploy what can go."""
        plan = self.plan
        assert plan is not None

        decided: list[str] = []
        for vertex in self.job_graph.topological_order():
            if plan.is_decided(vertex.id) or not self._inputs_finished(vertex.id):
                continue
            consumed = [
                ConsumedResult(
                    sum(p.result_bytes.get(e.id, 0) for p in self.by_vertex[e.source]),
                    plan.num_subpartitions(e),
                    broadcast=e.partitioner.kind == "broadcast",
                )
                for e in plan.inputs_of(vertex.id)
            ]
            decided += plan.decide(vertex.id, consumed)
        actions: list[Action] = []
        if decided:
            self.job_graph = plan.job_graph
            for vertex_id in decided:
                vertex = self.job_graph.vertex(vertex_id)
                row = []
                for i in range(vertex.parallelism):
                    ex = Execution(new_id(), vertex_id, i, self.num_restarts, timestamps={"CREATED": now_ms})
                    self._transition_execution(ex, ExecutionState.SCHEDULED, now_ms)
                    self.executions[ex.execution_id] = ex
                    row.append(ex)
                self.by_vertex[vertex_id] = row
            names = [f"{v.name}={v.parallelism}" for v in map(self.job_graph.vertex, decided)]
            self.history.append(f"{now_ms}: parallelism decided: {', '.join(names)}")
            missing = self.slots_needed - len(self.slots)
            if missing > 0:
                actions.append(RequestSlots(missing))
        return actions + self._deploy_ready(now_ms)

    def _deploy_ready(self, now_ms: int) -> list[Action]:
        """Deploy the scheduled subtasks whose inputs are complete and whose slot is here."""
        if self.status is not JobStatus.RUNNING:
            return []
        ids = []
        for vertex_id, row in self.by_vertex.items():
            if not row or not self._inputs_finished(vertex_id):
                continue
            for ex in row:
                if ex.state is not ExecutionState.SCHEDULED or self.slot_number(ex) not in self.slots:
                    continue
                ex.resource_id, ex.allocation_id = self.slot_of(ex)
                self._transition_execution(ex, ExecutionState.DEPLOYING, now_ms)
                ids.append(ex.execution_id)
        return [DeployTasks(ids)] if ids else []

    def _release_finished_results(self) -> list[Action]:
        """The blocking results of the attempt that failed: the new attempt writes its own."""
        if self.plan is None:
            return []
        by_resource: dict[str, list[str]] = {}
        for ex in self.executions.values():
            if ex.state is ExecutionState.FINISHED and ex.resource_id is not None:
                ids = by_resource.setdefault(ex.resource_id, [])
                outputs = self.job_graph.outputs_of(ex.vertex_id)
                ids.extend(partition_id(self.job_graph.job_id, e.id, ex) for e in outputs)
        return [ReleasePartitions(rid, ids) for rid, ids in by_resource.items() if ids]

    def _holds_unread_results(self, resource_id: str) -> bool:
        """A finished producer on ``resource_id`` wrote a blocking result a consumer has still to read."""
        if self.plan is None:
            return False
        for ex in self.executions.values():
            if ex.resource_id != resource_id or ex.state is not ExecutionState.FINISHED:
                continue
            for e in self.job_graph.outputs_of(ex.vertex_id):
                if not self._vertex_finished(e.target):
                    return True
        return False

    def _on_te_lost(self, event: TaskExecutorLost, now_ms: int) -> list[Action]:
        # Its slots are gone with it: a restart asks the ResourceManager for new ones.
        removed = 0
        for number, (rid, _) in list(self.slots.items()):
            if rid == event.resource_id:
                del self.slots[number]
                removed += 1
        lost = [
            ex
            for ex in self.executions.values()
            if ex.resource_id == event.resource_id and not ex.state.is_terminal()
        ]
        results_lost = self.status is JobStatus.RUNNING and self._holds_unread_results(event.resource_id)
        waiting = self.status is JobStatus.RUNNING and any(
            ex.state is ExecutionState.SCHEDULED for ex in self.executions.values()
        )
        if removed and waiting and not lost and not results_lost:
            return [RequestSlots(removed)]  # lost while still collecting slots: ask for replacements
        error = error_to_wire(TaskExecutorLostError(event.cause))
        if not lost:
            if results_lost:  # the blocking results it held are gone: run them again
                return self._fail(error, event.stimulus, now_ms)
            return []
        for ex in lost:
            self._transition_execution(ex, ExecutionState.FAILED, now_ms)
            ex.failure = error
        if self.status is JobStatus.RUNNING:
            return self._fail(error, event.stimulus, now_ms, failed=lost[0])
        self._prefer_root_cause(error, lost[0])  # a broken channel reported first was its echo
        return self._maybe_done(now_ms)

    def _on_cancel(self, event: CancelJob, now_ms: int) -> list[Action]:
        if self.status not in (JobStatus.CREATED, JobStatus.RUNNING, JobStatus.RESTARTING):
            return []
        self._restart_delay_ms = None
        actions = self._transition_job(JobStatus.CANCELLING, event.stimulus, now_ms)
        actions += self._cancel_all(now_ms)
        return actions + self._maybe_done(now_ms)

    def _fail(
        self,
        error: WireError,
        stimulus: str,
        now_ms: int,
        *,
        restartable: bool = True,
        failed: Execution | None = None,
    ) -> list[Action]:
        if self.status in (JobStatus.FAILING, JobStatus.FAILED, JobStatus.CANCELED, JobStatus.FINISHED):
            return []
        if self.status is JobStatus.CANCELLING:
            self.failure = self.failure or error
            return []
        if self.status is JobStatus.RESTARTING:
            return self._maybe_done(now_ms)  # already failing over: one restart covers both failures
        self.last_failure = error
        self.exception_history.append(
            FailureRecord(error, now_ms, self.num_restarts, failed.execution_id if failed else None)
        )
        policy = self.restart_policy
        if policy is not None and self.status is JobStatus.RUNNING:
            policy.notify_failure(now_ms)
            if restartable and self._is_recoverable(error.type) and policy.can_restart():
                self._restart_delay_ms = policy.backoff_time_ms()
                # The cause travels with the status change (logged), not as the job's final failure.
                restarting: list[Action] = [
                    JobStatusChanged(JobStatus.RUNNING, JobStatus.RESTARTING, error, stimulus)
                ]
                self._transition_job(JobStatus.RESTARTING, stimulus, now_ms)
                restarting += self._cancel_all(now_ms)
                return restarting + self._maybe_done(now_ms)
        actions: list[Action] = self._transition_job(JobStatus.FAILING, stimulus, now_ms, error)
        actions += self._cancel_all(now_ms)
        return actions + self._maybe_done(now_ms)

    def _prefer_root_cause(self, error: WireError, failed: Execution | None = None) -> None:
        """A broken data channel is usually the echo of another task's failure; if that task's own
        report arrives second, it is the cause worth showing (the user's exception, not the echo)."""
        if error.type == _ECHO:
            return
        history = self.exception_history
        if history and history[-1].attempt == self.num_restarts and history[-1].error.type == _ECHO:
            history[-1] = FailureRecord(
                error, history[-1].timestamp, self.num_restarts, failed.execution_id if failed else None
            )
        if self.failure is not None and self.failure.type == _ECHO:
            self.failure = error
        if self.last_failure is not None and self.last_failure.type == _ECHO:
            self.last_failure = error

    def _on_restart(self, event: RestartJob, now_ms: int) -> list[Action]:
        if self.status is not JobStatus.RESTARTING or not self.all_terminal():
            return []  # cancelled meanwhile, or a stale timer
        self._restart_delay_ms = None
        self.num_restarts += 1
        released = self._release_finished_results()
        self._new_attempt(self.num_restarts, now_ms)
        actions = released + self._transition_job(JobStatus.RUNNING, event.stimulus, now_ms)
        for ex in self.executions.values():
            self._transition_execution(ex, ExecutionState.SCHEDULED, now_ms)
        missing = self.slots_needed - len(self.slots)
        if missing > 0:
            actions.append(RequestSlots(missing))
            if self.plan is None:
                return actions
        if self.plan is not None:
            return actions + self._deploy_ready(now_ms)
        return actions + self._deploy_all(now_ms)

    def _cancel_all(self, now_ms: int) -> list[Action]:
        actions: list[Action] = []
        for ex in self.executions.values():
            if ex.state in (ExecutionState.CREATED, ExecutionState.SCHEDULED):
                self._transition_execution(ex, ExecutionState.CANCELED, now_ms)
            elif not ex.state.is_terminal() and ex.state is not ExecutionState.CANCELING:
                self._transition_execution(ex, ExecutionState.CANCELING, now_ms)
                assert ex.resource_id is not None
                actions.append(CancelTask(ex.execution_id, ex.resource_id))
        return actions

    def _maybe_done(self, now_ms: int) -> list[Action]:
        if not self.all_terminal():
            return []
        if self.status is JobStatus.RUNNING:
            if all(ex.state is ExecutionState.FINISHED for ex in self.executions.values()) and all(
                self.by_vertex[v.id] for v in self.job_graph.vertices
            ):
                return self._transition_job(JobStatus.FINISHED, "all tasks finished", now_ms)
            return []
        if self.status is JobStatus.FAILING:
            return self._transition_job(JobStatus.FAILED, "all tasks terminal after failure", now_ms)
        if self.status is JobStatus.CANCELLING:
            return self._transition_job(JobStatus.CANCELED, "all tasks canceled", now_ms)
        if self.status is JobStatus.RESTARTING and self._restart_delay_ms is not None:
            delay, self._restart_delay_ms = self._restart_delay_ms, None
            return [ScheduleRestart(delay)]
        return []
