"""The CheckpointCoordinator: a job's checkpoints and savepoints, as a pure state machine.

Flink's CheckpointCoordinator + PendingCheckpoint + CompletedCheckpointStore +
CheckpointFailureManager + CheckpointStatsTracker, in the style of the ExecutionGraph: events go in
(:meth:`CheckpointCoordinator.handle` with the current time), actions come out. No sockets, no
asyncio, no wall clock: time only advances through ``now_ms`` arguments, and periodic checkpoints
are triggered by :class:`Tick` events (the JobMaster shell ticks at :meth:`next_wakeup`). No file
I/O either: writing a checkpoint's ``_metadata`` and deleting the directories of failed, subsumed
and no-longer-retained checkpoints are *actions* (:class:`WriteCheckpointMetadata`,
:class:`DiscardCheckpoint`). The shell carries them out off its event loop, one after another in
the order they were emitted (on S3 a write or a recursive delete takes as long as it takes; the
loop keeps serving heartbeats and acknowledgements meanwhile), and feeds each outcome back as an
event (:class:`MetadataWritten`, :class:`MetadataWriteFailed`, :class:`CheckpointDiscarded`);
:func:`perform_storage_action` is that blocking step, for the shell's worker thread and for tests.

Lifecycle of one checkpoint::

    Tick (interval due, concurrency and min pause allow) / TriggerSavepoint / TriggerCheckpoint
      -> action TriggerCheckpointBarrier(id, location, source execution ids)  [PENDING]
    AcknowledgeCheckpoint from every task of the plan (with its TaskStateSnapshot)
      -> action WriteCheckpointMetadata(id, location, metadata)              [FINALIZING]
    MetadataWritten (the shell wrote ``_metadata`` atomically)
      -> checkpoint added to the store; DiscardCheckpoint for those beyond ``num_retained``;
         older pending checkpoints aborted (subsumed)
      -> actions NotifyCheckpointComplete (commit transactional sinks), CheckpointCompleted
                                                                               [COMPLETED]
    DeclineCheckpoint / Tick past the timeout / MetadataWriteFailed / JobNotRunning
      -> actions DiscardCheckpoint (its directory), NotifyCheckpointAborted, CheckpointFailed
                                                                               [FAILED]
      -> and FailJob when more consecutive checkpoints failed than tolerated.

A FINALIZING checkpoint does not time out (its write is under way and ends in an event); a job
that stops running aborts it like any pending one, and the DiscardCheckpoint queued behind the
write removes what the write left. A MetadataWritten for a checkpoint that is no longer pending
is a late message and changes nothing.

Savepoints are never subsumed or disposed (the user owns them) and their failures do not count
toward the tolerable failures; a synchronous savepoint (stop-with-savepoint) pauses periodic
checkpoints, which resume if it fails (Flink's H7).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from flott.configuration import parse_duration_ms
from flott.errors import ConfigurationError
from flott.runtime.checkpoint.errors import (
    CheckpointTriggerError,
    IllegalCheckpointTransitionError,
    SnapshotFormatError,
)
from flott.runtime.checkpoint.metadata import (
    CheckpointMetadata,
    OperatorSubtaskState,
    TaskStateSnapshot,
    merge_operator_states,
    shared_root,
    write_metadata,
)
from flott.runtime.checkpoint.shared_state_registry import SharedStateRegistry
from flott.runtime.checkpoint.stats import CheckpointStats, CheckpointStatsTracker
from flott.runtime.checkpoint.storage import CheckpointStorage, join

CHECKPOINT = "CHECKPOINT"
SAVEPOINT = "SAVEPOINT"
SYNC_SAVEPOINT = "SYNC_SAVEPOINT"


def _duration(conf: Mapping[str, str], key: str, default: int | None) -> int | None:
    value = conf.get(key)
    if value is None or str(value).strip() == "":
        return default
    ms = parse_duration_ms(key, str(value))
    return None if ms <= 0 and default is None else ms


def _int(conf: Mapping[str, str], keys: tuple[str, ...], default: int) -> int:
    for key in keys:
        if key in conf:
            try:
                return int(str(conf[key]).strip())
            except ValueError as e:
                raise ConfigurationError(f"Could not parse value '{conf[key]}' for key '{key}'") from e
    return default


@dataclass(frozen=True)
class CheckpointConfig:
    """Flink's checkpointing options (2.x keys with their 1.x aliases)."""

    interval_ms: int | None = None
    """None: no periodic checkpoints (savepoints still work)."""
    timeout_ms: int = 600_000
    min_pause_ms: int = 0
    max_concurrent: int = 1
    tolerable_failures: int | None = None
    """Consecutive checkpoint failures tolerated before the job fails (restart strategy applies).
    None (the key unset): a failed checkpoint never fails the job, the next one simply tries again.
    Flink's 0 makes a single slow checkpoint restart the whole job, a common surprise."""
    num_retained: int = 1
    checkpoints_dir: str | None = None
    savepoints_dir: str | None = None

    def __post_init__(self) -> None:
        if self.max_concurrent < 1 or self.num_retained < 1 or (self.tolerable_failures or 0) < 0:
            raise ConfigurationError(
                "max-concurrent-checkpoints and num-retained must be >= 1, tolerable-failed-checkpoints >= 0"
            )
        if self.timeout_ms <= 0 or self.min_pause_ms < 0:
            raise ConfigurationError("checkpoint timeout must be > 0 and min pause >= 0")

    @classmethod
    def from_config(cls, conf: Mapping[str, str]) -> CheckpointConfig:
        def first(*keys: str) -> str | None:
            for key in keys:
                if conf.get(key):
                    return str(conf[key])
            return None

        timeout = _duration(conf, "execution.checkpointing.timeout", 600_000)
        return cls(
            interval_ms=_duration(conf, "execution.checkpointing.interval", None),
            timeout_ms=timeout if timeout is not None else 600_000,
            min_pause_ms=_duration(conf, "execution.checkpointing.min-pause", 0) or 0,
            max_concurrent=_int(conf, ("execution.checkpointing.max-concurrent-checkpoints",), 1),
            tolerable_failures=(
                _int(conf, ("execution.checkpointing.tolerable-failed-checkpoints",), 0)
                if conf.get("execution.checkpointing.tolerable-failed-checkpoints") not in (None, "")
                else None
            ),
            num_retained=_int(
                conf, ("execution.checkpointing.num-retained", "state.checkpoints.num-retained"), 1
            ),
            checkpoints_dir=first("execution.checkpointing.dir", "state.checkpoints.dir"),
            savepoints_dir=first("execution.checkpointing.savepoint-dir", "state.savepoints.dir"),
        )


@dataclass(frozen=True)
class CheckpointPlan:
    """Who takes part in checkpoints of the current execution attempt of the job."""

    tasks_to_trigger: tuple[str, ...]
    """Execution ids of the source tasks: barriers are injected there."""
    tasks_to_ack: Mapping[str, str]
    """Execution id -> vertex id of every task that must acknowledge."""


# -- events -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobRunning:
    """All tasks are running (again): checkpoints may be triggered with this plan."""

    plan: CheckpointPlan
    stimulus: str = "job running"


@dataclass(frozen=True)
class JobNotRunning:
    """The job is failing over, cancelling or finished: abort pending checkpoints, stop triggering."""

    reason: str
    stimulus: str = "job not running"


@dataclass(frozen=True)
class Tick:
    """Time passed: check timeouts, maybe trigger a periodic checkpoint."""

    stimulus: str = "tick"


@dataclass(frozen=True)
class TriggerSavepoint:
    target_dir: str | None = None
    request_id: str | None = None
    sync: bool = False
    """True for stop-with-savepoint: periodic checkpoints pause (resume if the savepoint fails)."""
    drain: bool = False
    """Stop-with-savepoint with ``--drain``: sources emit the final watermark before the barrier."""
    stimulus: str = "savepoint requested"


@dataclass(frozen=True)
class TriggerCheckpoint:
    """A manual checkpoint (``POST /jobs/:id/checkpoints``)."""

    request_id: str | None = None
    stimulus: str = "checkpoint requested"


@dataclass(frozen=True)
class AcknowledgeCheckpoint:
    checkpoint_id: int
    execution_id: str
    snapshot: TaskStateSnapshot = field(default_factory=TaskStateSnapshot)
    stimulus: str = "task acknowledged checkpoint"


@dataclass(frozen=True)
class DeclineCheckpoint:
    checkpoint_id: int
    execution_id: str
    reason: str
    stimulus: str = "task declined checkpoint"


@dataclass(frozen=True)
class RestoredFrom:
    """The job was (re)started from this snapshot: ids continue after it; statistics record it."""

    checkpoint_id: int
    external_path: str
    is_savepoint: bool
    metadata: CheckpointMetadata | None = None
    """The snapshot's metadata: a checkpoint of this very job (a JobManager taking over) is
    retained again, its shared files registered, so it is disposed of when subsumed."""
    older: tuple[tuple[CheckpointMetadata, str], ...] = ()
    """The job's older retained checkpoints ``(metadata, directory)`` (a JobManager taking over),
    retained again too (those beyond ``num_retained`` are discarded at once)."""
    stimulus: str = "restored"


@dataclass(frozen=True)
class Shutdown:
    reason: str = "job master shut down"
    stimulus: str = "shutdown"


@dataclass(frozen=True)
class MetadataWritten:
    """The shell wrote the ``_metadata`` of a FINALIZING checkpoint."""

    checkpoint_id: int
    stimulus: str = "metadata written"


@dataclass(frozen=True)
class MetadataWriteFailed:
    checkpoint_id: int
    reason: str
    stimulus: str = "metadata write failed"


@dataclass(frozen=True)
class CheckpointDiscarded:
    """The shell deleted (or could not delete: ``error``) a checkpoint's directory."""

    location: str
    error: str | None = None
    stimulus: str = "checkpoint discarded"


Event = (
    JobRunning | JobNotRunning | Tick | TriggerSavepoint | TriggerCheckpoint
    | AcknowledgeCheckpoint | DeclineCheckpoint | RestoredFrom | Shutdown
    | MetadataWritten | MetadataWriteFailed | CheckpointDiscarded
)  # fmt: skip

# -- actions ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TriggerCheckpointBarrier:
    """Inject barrier ``checkpoint_id`` at these source tasks; tasks write state under ``location``."""

    checkpoint_id: int
    timestamp: int
    checkpoint_type: str
    location: str
    execution_ids: tuple[str, ...]
    drain: bool = False


@dataclass(frozen=True)
class NotifyCheckpointComplete:
    """Tell tasks (e.g. transactional sinks: commit what is pending up to this checkpoint)."""

    checkpoint_id: int
    execution_ids: tuple[str, ...]
    final: bool = False
    """Every source task acknowledged with ``end_of_input``: sources may finish now."""


@dataclass(frozen=True)
class NotifyCheckpointAborted:
    checkpoint_id: int
    execution_ids: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class CheckpointCompleted:
    """For whoever waits on it (savepoint trigger operations, stop-with-savepoint)."""

    checkpoint_id: int
    checkpoint_type: str
    external_path: str
    request_id: str | None


@dataclass(frozen=True)
class CheckpointFailed:
    checkpoint_id: int
    checkpoint_type: str
    reason: str
    request_id: str | None


@dataclass(frozen=True)
class FailJob:
    """Too many consecutive checkpoint failures: fail the job (the restart strategy decides what next).

    The shell raises it as :class:`CheckpointFailureLimitExceededError` into the ExecutionGraph."""

    reason: str


@dataclass(frozen=True)
class WriteCheckpointMetadata:
    """Write ``metadata`` atomically to ``<location>/_metadata``; answer with :class:`MetadataWritten`
    or :class:`MetadataWriteFailed`."""

    checkpoint_id: int
    location: str
    metadata: CheckpointMetadata


@dataclass(frozen=True)
class DiscardCheckpoint:
    """Delete a checkpoint's directory (failed, subsumed or no longer retained), and the shared
    files no retained checkpoint refers to any more; answer with :class:`CheckpointDiscarded`.
    Savepoints are never discarded once completed (the user owns them)."""

    checkpoint_id: int
    location: str
    shared_files: tuple[str, ...] = ()
    """Relative to the job's checkpoint directory (the parent of ``location``)."""


StorageAction = WriteCheckpointMetadata | DiscardCheckpoint
"""The actions the shell runs off its event loop, in order."""

Action = (
    TriggerCheckpointBarrier | NotifyCheckpointComplete | NotifyCheckpointAborted
    | CheckpointCompleted | CheckpointFailed | FailJob | WriteCheckpointMetadata | DiscardCheckpoint
)  # fmt: skip


def perform_storage_action(storage: CheckpointStorage, action: StorageAction) -> Event:
    """Carry out one storage action (blocking: the shell runs it in a worker thread) and return
    the event that reports its outcome to the coordinator."""
    if isinstance(action, WriteCheckpointMetadata):
        try:
            write_metadata(storage, action.location, action.metadata)
        except (SnapshotFormatError, OSError) as e:
            return MetadataWriteFailed(action.checkpoint_id, f"Failure to finalize checkpoint: {e}")
        return MetadataWritten(action.checkpoint_id)
    try:
        storage.delete_dir(action.location)
        if action.shared_files:
            storage.delete_files(shared_root(action.location), action.shared_files)
    except OSError as e:  # leftover files are garbage, not a reason to fail anything
        return CheckpointDiscarded(action.location, str(e))
    return CheckpointDiscarded(action.location)


@dataclass
class PendingCheckpoint:
    checkpoint_id: int
    checkpoint_type: str
    timestamp: int
    location: str
    plan: CheckpointPlan
    request_id: str | None
    stats: CheckpointStats
    not_yet_acked: set[str]
    acked: dict[str, TaskStateSnapshot] = field(default_factory=dict)
    drain: bool = False
    metadata: CheckpointMetadata | None = None
    """Set once every task acknowledged: the checkpoint is FINALIZING (its metadata being written)."""

    @property
    def is_savepoint(self) -> bool:
        return self.checkpoint_type != CHECKPOINT


@dataclass(frozen=True)
class CompletedCheckpoint:
    checkpoint_id: int
    checkpoint_type: str
    timestamp: int
    external_path: str
    metadata: CheckpointMetadata


class CheckpointCoordinator:
    """See the module docstring."""

    def __init__(
        self,
        job_id: str,
        config: CheckpointConfig,
        *,
        first_checkpoint_id: int = 1,
        random_hex: Callable[[int], str] = secrets.token_hex,
        history_size: int = 10,
    ) -> None:
        self.job_id = job_id
        self.config = config
        self._random_hex = random_hex
        self.next_checkpoint_id = first_checkpoint_id
        self.plan: CheckpointPlan | None = None
        self.pending: dict[int, PendingCheckpoint] = {}
        self.completed: list[CompletedCheckpoint] = []
        """The CompletedCheckpointStore: retained checkpoints, oldest first (no savepoints)."""
        self.shared = SharedStateRegistry()
        """The shared files (incremental checkpoints) the retained checkpoints refer to."""
        self.stats = CheckpointStatsTracker(history_size)
        self.consecutive_failures = 0
        self.periodic_suspended = False
        self.next_trigger_at: int | None = None
        self.last_checkpoint_end: int | None = None
        self.shut_down = False
        self.history: list[str] = []

    # -- queries --------------------------------------------------------------------------

    def latest_completed(self) -> CompletedCheckpoint | None:
        """What a failover restores (D5: it wins over the job's initial savepoint path)."""
        return self.completed[-1] if self.completed else None

    def num_pending_checkpoints(self) -> int:
        return sum(1 for p in self.pending.values() if not p.is_savepoint)

    def next_wakeup(self) -> int | None:
        """The earliest time a :class:`Tick` has something to do (a trigger or a timeout)."""
        times = [p.timestamp + self.config.timeout_ms for p in self.pending.values() if p.metadata is None]
        pending = self.num_pending_checkpoints()
        blocked = pending >= self.config.max_concurrent or (self.config.min_pause_ms > 0 and pending > 0)
        if self._periodic_active() and self.next_trigger_at is not None and not blocked:
            # While pending checkpoints block a trigger, only their completion (an event) unblocks it.
            times.append(self.next_trigger_at)
        return min(times) if times else None

    def checkpoint_statistics(self) -> dict[str, Any]:
        """The body of ``GET /jobs/:id/checkpoints`` (Flink's CheckpointingStatistics)."""
        return self.stats.to_rest()

    def _periodic_active(self) -> bool:
        return (
            self.config.interval_ms is not None
            and self.plan is not None
            and not self.periodic_suspended
            and not self.shut_down
        )

    # -- the state machine ----------------------------------------------------------------

    def handle(self, event: Event, now_ms: int) -> list[Action]:
        self.history.append(f"{now_ms}: {type(event).__name__}: {event.stimulus}")
        if isinstance(event, Shutdown):
            return self._on_shutdown(event, now_ms)
        if isinstance(event, CheckpointDiscarded):
            if event.error is not None:
                self.history.append(f"could not dispose {event.location}: {event.error}")
            return []
        if self.shut_down:
            late = (Tick, JobNotRunning, AcknowledgeCheckpoint, DeclineCheckpoint, MetadataWritten,
                    MetadataWriteFailed)  # fmt: skip
            if isinstance(event, late):
                return []  # late messages after shutdown are harmless
            raise IllegalCheckpointTransitionError(
                f"checkpoint coordinator of job {self.job_id} is shut down ({type(event).__name__})"
            )
        if isinstance(event, Tick):
            return self._on_tick(now_ms)
        if isinstance(event, AcknowledgeCheckpoint):
            return self._on_ack(event, now_ms)
        if isinstance(event, DeclineCheckpoint):
            return self._on_decline(event, now_ms)
        if isinstance(event, TriggerSavepoint):
            return self._on_trigger_savepoint(event, now_ms)
        if isinstance(event, TriggerCheckpoint):
            return self._on_trigger_manual(event, now_ms)
        if isinstance(event, JobRunning):
            return self._on_job_running(event, now_ms)
        if isinstance(event, JobNotRunning):
            return self._on_job_not_running(event, now_ms)
        if isinstance(event, MetadataWritten):
            return self._on_metadata_written(event, now_ms)
        if isinstance(event, MetadataWriteFailed):
            return self._on_metadata_write_failed(event, now_ms)
        return self._on_restored(event, now_ms)

    # -- lifecycle of the job -------------------------------------------------------------

    def _on_job_running(self, event: JobRunning, now_ms: int) -> list[Action]:
        if self.plan is not None:
            raise IllegalCheckpointTransitionError("JobRunning while the job is already running")
        if not event.plan.tasks_to_trigger:
            raise IllegalCheckpointTransitionError("a checkpoint plan needs at least one source task")
        if not set(event.plan.tasks_to_trigger) <= set(event.plan.tasks_to_ack):
            raise IllegalCheckpointTransitionError("every source task must also acknowledge checkpoints")
        self.plan = event.plan
        if self.config.interval_ms is not None:
            self.next_trigger_at = now_ms + self.config.interval_ms
        return []

    def _on_job_not_running(self, event: JobNotRunning, now_ms: int) -> list[Action]:
        self.plan = None
        self.next_trigger_at = None
        actions: list[Action] = []
        for cid in sorted(self.pending):
            # Not the checkpoint's fault: does not count toward tolerable failures, no notifications
            # (the tasks are going away).
            actions += self._fail(cid, f"job not running: {event.reason}", now_ms, count=False, notify=False)
        return actions

    def _on_shutdown(self, event: Shutdown, now_ms: int) -> list[Action]:
        if self.shut_down:
            return []
        actions = self._on_job_not_running(JobNotRunning(event.reason), now_ms)
        self.shut_down = True
        return actions

    def _on_restored(self, event: RestoredFrom, now_ms: int) -> list[Action]:
        self.next_checkpoint_id = max(self.next_checkpoint_id, event.checkpoint_id + 1)
        self.stats.reported_restored(event.checkpoint_id, event.external_path, event.is_savepoint, now_ms)
        if event.metadata is None:
            return []
        # A JobManager taking over the job: its checkpoints are this job's, retained again
        # (subsumed and disposed of like any), their shared files registered (Flink rebuilds the
        # SharedStateRegistry from the recovered CompletedCheckpointStore).
        for meta, path in [*event.older, (event.metadata, event.external_path)]:
            own = not meta.is_savepoint and meta.job_id == self.job_id
            if own and all(c.checkpoint_id != meta.checkpoint_id for c in self.completed):
                self.completed.append(
                    CompletedCheckpoint(meta.checkpoint_id, meta.checkpoint_type, meta.timestamp, path, meta)
                )
                self.shared.register(meta.checkpoint_id, meta.shared_files())
        self.completed.sort(key=lambda c: c.checkpoint_id)
        return self._trim_retained()

    def _trim_retained(self) -> list[Action]:
        """Discard the oldest completed checkpoints beyond ``num_retained`` (and shared files only
        they used)."""
        actions: list[Action] = []
        while len(self.completed) > self.config.num_retained:
            old = self.completed.pop(0)
            unused = self.shared.unregister(old.checkpoint_id, old.metadata.shared_files())
            actions.append(DiscardCheckpoint(old.checkpoint_id, old.external_path, tuple(unused)))
            for s in self.stats.history:
                if s.checkpoint_id == old.checkpoint_id:
                    s.discarded = True
        return actions

    # -- triggering -----------------------------------------------------------------------

    def _on_tick(self, now_ms: int) -> list[Action]:
        actions: list[Action] = []
        for cid in sorted(self.pending):
            p = self.pending[cid]
            if p.metadata is None and now_ms >= p.timestamp + self.config.timeout_ms:
                actions += self._fail(cid, "Checkpoint expired before completing.", now_ms, count=True)
        if not self._periodic_active() or self.next_trigger_at is None or now_ms < self.next_trigger_at:
            return actions
        if self.num_pending_checkpoints() >= self.config.max_concurrent:
            return actions  # retried on a later tick, once a pending checkpoint ended
        if self.config.min_pause_ms > 0:
            if self.num_pending_checkpoints() > 0:
                return actions  # a min pause implies one checkpoint at a time, as in Flink
            if self.last_checkpoint_end is not None:
                earliest = self.last_checkpoint_end + self.config.min_pause_ms
                if now_ms < earliest:
                    self.next_trigger_at = earliest
                    return actions
        dir_ = self._checkpoints_dir()
        self.next_trigger_at = now_ms + (self.config.interval_ms or 0)
        actions.append(self._trigger(CHECKPOINT, join(dir_, self.job_id, "chk-{id}"), now_ms, None))
        return actions

    def _checkpoints_dir(self) -> str:
        if not self.config.checkpoints_dir:
            raise ConfigurationError(
                "Config key [execution.checkpointing.dir] (state.checkpoints.dir) is not set: "
                "checkpoints need a directory"
            )
        return self.config.checkpoints_dir

    def _on_trigger_manual(self, event: TriggerCheckpoint, now_ms: int) -> list[Action]:
        self._require_running("checkpoint")
        location = join(self._checkpoints_dir(), self.job_id, "chk-{id}")
        return [self._trigger(CHECKPOINT, location, now_ms, event.request_id)]

    def _on_trigger_savepoint(self, event: TriggerSavepoint, now_ms: int) -> list[Action]:
        target = event.target_dir or self.config.savepoints_dir
        if not target:
            raise ConfigurationError(
                "Config key [state.savepoints.dir] is not set. Property [target-directory] must be provided."
            )
        self._require_running("savepoint")
        if event.sync and any(p.checkpoint_type == SYNC_SAVEPOINT for p in self.pending.values()):
            raise CheckpointTriggerError("a stop-with-savepoint is already in progress")
        name = f"savepoint-{self.job_id[:6]}-{self._random_hex(6)}"
        if event.sync:
            self.periodic_suspended = True
        kind = SYNC_SAVEPOINT if event.sync else SAVEPOINT
        return [self._trigger(kind, join(target, name), now_ms, event.request_id, drain=event.drain)]

    def _require_running(self, what: str) -> None:
        if self.plan is None:
            raise CheckpointTriggerError(
                f"cannot trigger a {what} of job {self.job_id}: not all required tasks are currently running"
            )

    def _trigger(
        self, kind: str, location: str, now_ms: int, request_id: str | None, *, drain: bool = False
    ) -> TriggerCheckpointBarrier:
        assert self.plan is not None
        cid = self.next_checkpoint_id
        self.next_checkpoint_id += 1
        location = location.replace("{id}", str(cid))
        plan = self.plan
        stats = CheckpointStats(cid, kind, now_ms, len(plan.tasks_to_ack), dict(plan.tasks_to_ack))
        self.pending[cid] = PendingCheckpoint(
            cid, kind, now_ms, location, plan, request_id, stats, set(plan.tasks_to_ack), drain=drain
        )
        self.stats.reported_pending(stats)
        return TriggerCheckpointBarrier(cid, now_ms, kind, location, tuple(plan.tasks_to_trigger), drain)

    # -- acknowledgements -----------------------------------------------------------------

    def _pending_for(self, checkpoint_id: int, what: str) -> PendingCheckpoint | None:
        if checkpoint_id >= self.next_checkpoint_id or checkpoint_id < 1:
            raise IllegalCheckpointTransitionError(
                f"{what} for checkpoint {checkpoint_id}, which was never triggered"
            )
        return self.pending.get(checkpoint_id)  # None: already completed or failed (a late message)

    def _on_ack(self, event: AcknowledgeCheckpoint, now_ms: int) -> list[Action]:
        pending = self._pending_for(event.checkpoint_id, "acknowledgement")
        if pending is None:
            return []
        if event.execution_id not in pending.plan.tasks_to_ack:
            raise IllegalCheckpointTransitionError(
                f"task {event.execution_id} acknowledged checkpoint {event.checkpoint_id}, not part of it"
            )
        if event.execution_id not in pending.not_yet_acked:
            raise IllegalCheckpointTransitionError(
                f"task {event.execution_id} acknowledged checkpoint {event.checkpoint_id} twice"
            )
        pending.not_yet_acked.discard(event.execution_id)
        pending.acked[event.execution_id] = event.snapshot
        pending.stats.acks[event.execution_id] = (
            now_ms, event.snapshot.state_size, event.snapshot.checkpointed_size(event.checkpoint_id)
        )
        if pending.not_yet_acked:
            return []
        return self._complete(pending, now_ms)

    def _on_decline(self, event: DeclineCheckpoint, now_ms: int) -> list[Action]:
        pending = self._pending_for(event.checkpoint_id, "decline")
        if pending is None or pending.metadata is not None:
            return []  # ended already, or every task acknowledged it (a late decline)
        if event.execution_id not in pending.plan.tasks_to_ack:
            raise IllegalCheckpointTransitionError(
                f"task {event.execution_id} declined checkpoint {event.checkpoint_id} but is not part of it"
            )
        reason = f"Checkpoint was declined by task {event.execution_id}: {event.reason}"
        return self._fail(event.checkpoint_id, reason, now_ms, count=True)

    # -- completion and failure -----------------------------------------------------------

    def _complete(self, pending: PendingCheckpoint, now_ms: int) -> list[Action]:
        """Every task acknowledged: build the metadata (pure) and ask the shell to write it."""
        cid = pending.checkpoint_id
        states: list[OperatorSubtaskState] = [op for snap in pending.acked.values() for op in snap.operators]
        try:
            pending.metadata = CheckpointMetadata(
                job_id=self.job_id,
                checkpoint_id=cid,
                timestamp=pending.timestamp,
                is_savepoint=pending.is_savepoint,
                checkpoint_type=pending.checkpoint_type,
                operators=merge_operator_states(states),
                savepoint_token=self._random_hex(16) if pending.is_savepoint else "",
            )
        except SnapshotFormatError as e:
            return self._fail(cid, f"Failure to finalize checkpoint: {e}", now_ms, count=True)
        gone = [
            f.path
            for op in pending.metadata.operators
            for h in op.incremental
            for f in h.shared
            if f.checkpoint_id != cid and not self.shared.is_registered(f.path)
        ]
        if gone:
            pending.metadata = None
            return self._fail(
                cid,
                f"Failure to finalize checkpoint: it refers to shared file {gone[0]}, which no retained "
                "checkpoint holds any more (a task reused files of a checkpoint subsumed meanwhile)",
                now_ms,
                count=True,
            )
        return [WriteCheckpointMetadata(cid, pending.location, pending.metadata)]

    def _finalizing(self, checkpoint_id: int, what: str) -> PendingCheckpoint | None:
        pending = self._pending_for(checkpoint_id, what)
        if pending is not None and pending.metadata is None:
            raise IllegalCheckpointTransitionError(
                f"{what} for checkpoint {checkpoint_id}, whose metadata was never asked to be written"
            )
        return pending

    def _on_metadata_write_failed(self, event: MetadataWriteFailed, now_ms: int) -> list[Action]:
        if self._finalizing(event.checkpoint_id, "metadata write failure") is None:
            return []
        return self._fail(event.checkpoint_id, event.reason, now_ms, count=True)

    def _on_metadata_written(self, event: MetadataWritten, now_ms: int) -> list[Action]:
        pending = self._finalizing(event.checkpoint_id, "metadata written")
        if pending is None:
            return []  # aborted while its metadata was being written: its discard follows the write
        metadata = pending.metadata
        assert metadata is not None
        cid = pending.checkpoint_id
        del self.pending[cid]
        self.last_checkpoint_end = now_ms
        self.stats.reported_completed(pending.stats, pending.location)
        actions: list[Action] = []
        if pending.is_savepoint:
            if pending.checkpoint_type == SYNC_SAVEPOINT:
                self.periodic_suspended = True  # stays off: the job is stopping (H8 happy path)
        else:
            self.consecutive_failures = 0
            self.completed.append(CompletedCheckpoint(cid, pending.checkpoint_type, pending.timestamp,
                                                      pending.location, metadata))  # fmt: skip
            self.shared.register(cid, metadata.shared_files())
            actions += self._trim_retained()
            # Older pending checkpoints are subsumed: a newer one completed (not a failure).
            for older in sorted(c for c, p in self.pending.items() if c < cid and not p.is_savepoint):
                actions += self._fail(older, "Checkpoint has been subsumed.", now_ms, count=False)
        final = all(
            pending.acked[eid].end_of_input for eid in pending.plan.tasks_to_trigger if eid in pending.acked
        )
        actions.append(NotifyCheckpointComplete(cid, tuple(pending.plan.tasks_to_ack), final))
        actions.append(
            CheckpointCompleted(cid, pending.checkpoint_type, pending.location, pending.request_id)
        )
        return actions

    def _fail(self, cid: int, reason: str, now_ms: int, *, count: bool, notify: bool = True) -> list[Action]:
        pending = self.pending.pop(cid)
        self.last_checkpoint_end = now_ms
        self.stats.reported_failed(pending.stats, now_ms, reason)
        uploaded = [
            f.path
            for snap in pending.acked.values()
            for op in snap.operators
            if op.incremental is not None
            for f in op.incremental.shared
            if f.checkpoint_id == cid
        ]
        unused = tuple(self.shared.unreferenced(uploaded))
        actions: list[Action] = [DiscardCheckpoint(cid, pending.location, unused)]
        if notify:
            actions.append(NotifyCheckpointAborted(cid, tuple(pending.plan.tasks_to_ack), reason))
        actions.append(CheckpointFailed(cid, pending.checkpoint_type, reason, pending.request_id))
        if pending.checkpoint_type == SYNC_SAVEPOINT:
            self.periodic_suspended = False  # H7: periodic checkpoints resume when the stop fails
            if self.config.interval_ms is not None and self.plan is not None:
                self.next_trigger_at = now_ms + self.config.interval_ms
        if count and not pending.is_savepoint:
            self.consecutive_failures += 1
            tolerated = self.config.tolerable_failures
            if tolerated is not None and self.consecutive_failures > tolerated:
                actions.append(FailJob(
                    f"Exceeded checkpoint tolerable failure threshold "
                    f"({self.consecutive_failures} consecutive failures, "
                    f"{self.config.tolerable_failures} tolerated); last: {reason}"
                ))  # fmt: skip
                self.consecutive_failures = 0
        return actions
