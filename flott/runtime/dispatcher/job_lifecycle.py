"""The Dispatcher's jobs as a pure state machine (events in, actions out, no asyncio, no clock).

Flink's Dispatcher keeps, per job id, where the job is in its life: submitted (the id is taken,
the job's files are being stored), initializing (its JobManagerRunner is building the JobMaster:
the savepoint is read, the job is persisted in HA mode, the ExecutionGraph is built), running
under a JobMaster, and globally terminal, when its ExecutionGraph is archived (the
ExecutionGraphInfoStore) and its resources are cleaned up. Rescaling is flott's stop-with-savepoint
followed by a new run of the same job id at another parallelism: the first run's end is not
global, so nothing is cleaned up and the job stays visible (archived, then running again).

::

    Submit ──► SUBMITTED ──InitializationStarted──► INITIALIZING ──JobMasterStarted──► RUNNING
                  │                                      │                    RescaleRequested │ ▲
                  └────────── SubmissionFailed ──────────┘ (forgotten)                         ▼ │
                                                                             RESCALING ─RescaleAborted
    RUNNING ──JobReachedTerminalState──► ARCHIVED  (StopJobMaster, CleanupJobFiles, RecordJobResult)
    RESCALING ──JobReachedTerminalState(FINISHED)──► ARCHIVED, rescale pending (StopJobMaster)
              ──RescaleRestart──► INITIALIZING (the archived run stays visible until the new
                                                JobMaster runs; SubmissionFailed: back to ARCHIVED,
                                                now globally terminal)

A cancellation of a job that is still submitted or initializing is remembered and carried out as
soon as its JobMaster runs (Flink cancels initializing jobs too); cancelling a CANCELED job is
accepted (Flink: idempotent). A second submission of a known id is a
:class:`~flott.errors.DuplicateJobSubmissionError`; any other move the state does not allow is an
:class:`~flott.errors.IllegalJobTransitionError`. The archive keeps at most ``max_archived`` jobs
for ``archive_ttl_s`` seconds (``jobstore.max-capacity``, ``jobstore.expiration-time``); time comes
in with the events (``now``, monotonic seconds).

The shell (:class:`~flott.runtime.dispatcher.dispatcher.Dispatcher`) holds what cannot be data (the
JobMaster objects and result futures) and carries the actions out.
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from flott.common.job_status import JobStatus
from flott.errors import (
    DuplicateJobSubmissionError,
    IllegalJobTransitionError,
    JobAlreadyTerminalError,
    JobInitializingError,
    JobNotFoundError,
)
from flott.runtime.messages.archived_execution_graph import ArchivedExecutionGraph
from flott.runtime.messages.job import ExecutionGraphInfo, JobDetails, JobResult
from flott.runtime.messages.job_artifacts import JobArtifact


class DispatcherJobStatus(enum.Enum):
    SUBMITTED = "SUBMITTED"
    INITIALIZING = "INITIALIZING"
    RUNNING = "RUNNING"
    RESCALING = "RESCALING"
    ARCHIVED = "ARCHIVED"

    @property
    def has_job_master(self) -> bool:
        return self in (DispatcherJobStatus.RUNNING, DispatcherJobStatus.RESCALING)


@dataclass
class ArchivedJob:
    """A globally terminal job as the Dispatcher answers for it (Flink: ExecutionGraphInfo)."""

    info: ExecutionGraphInfo
    result: JobResult
    archived_at: float
    """Monotonic seconds (the clock of the events)."""
    graph: ArchivedExecutionGraph | None = None
    checkpoint_statistics: dict[str, Any] = field(default_factory=dict)
    overview: JobDetails | None = None
    """The job's row of the jobs overview, computed once by the Dispatcher: an archived job's
    row never changes, and recomputing a thousand of them was most of ``GET /jobs/overview``."""

    @property
    def status(self) -> JobStatus:
        return JobStatus[self.result.status]


@dataclass
class DispatcherJob:
    job_id: str
    status: DispatcherJobStatus
    subtasks: int = 0
    """What admission control counts while the job is not archived."""
    artifacts: list[JobArtifact] = field(default_factory=list)
    archived: ArchivedJob | None = None
    """Set when ARCHIVED, and during a rescale's restart (the previous run stays visible)."""
    cancel_requested: bool = False
    rescale_pending: bool = False
    client_heartbeat: int | None = None


# -- events -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Submit:
    """A submission passed admission control, or HA recovery starts a job a previous leader
    acknowledged: claim the id."""

    job_id: str
    subtasks: int
    artifacts: tuple[JobArtifact, ...] = ()


@dataclass(frozen=True)
class InitializationStarted:
    job_id: str


@dataclass(frozen=True)
class JobMasterStarted:
    job_id: str


@dataclass(frozen=True)
class SubmissionFailed:
    """Storing the files, reading the savepoint, persisting or building the JobMaster failed."""

    job_id: str
    files_stored: bool = False


@dataclass(frozen=True)
class CancelJob:
    job_id: str


@dataclass(frozen=True)
class JobReachedTerminalState:
    job_id: str
    archived: ArchivedJob


@dataclass(frozen=True)
class RescaleRequested:
    job_id: str


@dataclass(frozen=True)
class RescaleAborted:
    """The rescale's savepoint failed: the job keeps running at its parallelism."""

    job_id: str


@dataclass(frozen=True)
class RescaleRestart:
    job_id: str
    subtasks: int


@dataclass(frozen=True)
class RestoreArchived:
    """HA recovery: a job that became globally terminal under an earlier leader."""

    archived: ArchivedJob


@dataclass(frozen=True)
class ClientHeartbeat:
    job_id: str
    expired_timestamp: int


@dataclass(frozen=True)
class Expire:
    """Time passed: drop archived jobs past ``jobstore.expiration-time``."""


Event = (
    Submit | InitializationStarted | JobMasterStarted | SubmissionFailed | CancelJob
    | JobReachedTerminalState | RescaleRequested | RescaleAborted | RescaleRestart | RestoreArchived
    | ClientHeartbeat | Expire
)  # fmt: skip


# -- actions ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CancelJobMaster:
    job_id: str


@dataclass(frozen=True)
class StopJobMaster:
    job_id: str


@dataclass(frozen=True)
class CleanupJobFiles:
    """Delete the job's blobs (Flink's global cleanup of the BlobServer)."""

    job_id: str


@dataclass(frozen=True)
class RecordJobResult:
    """HA: archive the job durably, write its JobResultStore entry, clean its HA data up."""

    job_id: str
    archived: ArchivedJob


Action = CancelJobMaster | StopJobMaster | CleanupJobFiles | RecordJobResult


class DispatcherJobs:
    """See the module docstring."""

    def __init__(self, max_archived: int, archive_ttl_s: float) -> None:
        self._max_archived = max_archived
        self._archive_ttl_s = archive_ttl_s
        self._jobs: OrderedDict[str, DispatcherJob] = OrderedDict()
        """Archived jobs in the order they were archived (oldest first), the others after them."""
        self._next_expiry = float("-inf")
        """No archived job expires before this time: every read of the jobs overview expires
        first, and a scan of a thousand archived jobs per request was a sixth of its cost."""
        self.archive_version = 0
        """Changes whenever :meth:`archive` may answer differently: every event but an Expire
        that expires nothing. Readers keep what they derive from the archive (the sorted rows of
        the jobs overview) until it changes."""

    # -- queries ------------------------------------------------------------------------------

    def get(self, job_id: str) -> DispatcherJob | None:
        return self._jobs.get(job_id)

    def status(self, job_id: str) -> DispatcherJobStatus | None:
        job = self._jobs.get(job_id)
        return job.status if job is not None else None

    def knows(self, job_id: str) -> bool:
        return job_id in self._jobs

    def archived(self, job_id: str) -> ArchivedJob:
        """The archived run of a job that has no JobMaster; JobNotFoundError (404) otherwise."""
        job = self._jobs.get(job_id)
        if job is None or job.archived is None or job.status.has_job_master:
            raise JobNotFoundError(f"job {job_id} not found")
        return job.archived

    def require_job_master(self, job_id: str) -> DispatcherJob:
        """The job, if it runs under a JobMaster; else the typed error a gateway call answers with."""
        job = self._jobs.get(job_id)
        if job is None:
            raise JobNotFoundError(f"job {job_id} not found")
        if job.status.has_job_master:
            return job
        if job.status is DispatcherJobStatus.ARCHIVED and job.archived is not None:
            raise JobAlreadyTerminalError(f"job {job_id} already reached {job.archived.result.status}")
        raise JobInitializingError(
            f"job {job_id} is still initializing: it has no JobMaster yet, retry in a moment"
        )

    def archive(self) -> Iterator[ArchivedJob]:
        """Archived jobs, oldest first (jobs running again after a rescale are not in it)."""
        for job in self._jobs.values():
            if job.status is DispatcherJobStatus.ARCHIVED and job.archived is not None:
                yield job.archived

    def with_job_master(self) -> list[str]:
        return [j.job_id for j in self._jobs.values() if j.status.has_job_master]

    def active_subtasks(self, without: str | None = None) -> int:
        """Subtasks of every job admitted and not archived (what cluster limits count)."""
        return sum(
            j.subtasks for j in self._jobs.values()
            if j.job_id != without and j.status is not DispatcherJobStatus.ARCHIVED
        )  # fmt: skip

    # -- the state machine --------------------------------------------------------------------

    def handle(self, event: Event, now: float) -> list[Action]:
        if isinstance(event, Expire):
            return self._expire(now)
        self._next_expiry = float("-inf")  # any other event may archive a job: look again
        self.archive_version += 1
        if isinstance(event, Submit):
            return self._on_submit(event)
        if isinstance(event, RestoreArchived):
            return self._on_restore_archived(event, now)
        job = self._jobs.get(event.job_id)
        if job is None:
            raise JobNotFoundError(f"job {event.job_id} not found")
        if isinstance(event, InitializationStarted):
            self._move(job, (DispatcherJobStatus.SUBMITTED,), DispatcherJobStatus.INITIALIZING, event)
            return []
        if isinstance(event, JobMasterStarted):
            self._move(job, (DispatcherJobStatus.INITIALIZING,), DispatcherJobStatus.RUNNING, event)
            job.archived, job.rescale_pending = None, False
            if job.cancel_requested:
                job.cancel_requested = False
                return [CancelJobMaster(job.job_id)]
            return []
        if isinstance(event, SubmissionFailed):
            return self._on_submission_failed(job, event, now)
        if isinstance(event, CancelJob):
            return self._on_cancel(job)
        if isinstance(event, JobReachedTerminalState):
            return self._on_terminal(job, event, now)
        if isinstance(event, RescaleRequested):
            self._move(job, (DispatcherJobStatus.RUNNING,), DispatcherJobStatus.RESCALING, event)
            return []
        if isinstance(event, RescaleAborted):
            if job.status is DispatcherJobStatus.RESCALING:
                job.status = DispatcherJobStatus.RUNNING
            return []  # the job may have ended meanwhile: then it is archived and stays so
        if isinstance(event, RescaleRestart):
            if not job.rescale_pending:
                raise IllegalJobTransitionError(f"job {job.job_id}: no rescale waits to restart it")
            self._move(job, (DispatcherJobStatus.ARCHIVED,), DispatcherJobStatus.INITIALIZING, event)
            job.subtasks = event.subtasks
            return []
        job.client_heartbeat = event.expired_timestamp
        return []

    def _move(
        self,
        job: DispatcherJob,
        allowed: tuple[DispatcherJobStatus, ...],
        to: DispatcherJobStatus,
        event: Event,
    ) -> None:
        if job.status not in allowed:
            raise IllegalJobTransitionError(
                f"job {job.job_id}: {type(event).__name__} in state {job.status.name} "
                f"(allowed in {', '.join(s.name for s in allowed)})"
            )
        job.status = to

    def _on_submit(self, event: Submit) -> list[Action]:
        if event.job_id in self._jobs:
            raise DuplicateJobSubmissionError(f"job {event.job_id} has already been submitted")
        self._jobs[event.job_id] = DispatcherJob(
            event.job_id, DispatcherJobStatus.SUBMITTED, event.subtasks, list(event.artifacts)
        )
        return []

    def _on_submission_failed(self, job: DispatcherJob, event: SubmissionFailed, now: float) -> list[Action]:
        if job.status not in (DispatcherJobStatus.SUBMITTED, DispatcherJobStatus.INITIALIZING):
            raise IllegalJobTransitionError(
                f"job {job.job_id}: SubmissionFailed in state {job.status.name}"
            )
        if job.rescale_pending and job.archived is not None:
            # The rescaled run never started: the finished run is the job's end after all.
            job.status, job.rescale_pending = DispatcherJobStatus.ARCHIVED, False
            self._jobs.move_to_end(job.job_id)
            return [CleanupJobFiles(job.job_id), RecordJobResult(job.job_id, job.archived)]
        del self._jobs[job.job_id]
        return [CleanupJobFiles(job.job_id)] if event.files_stored else []

    def _on_cancel(self, job: DispatcherJob) -> list[Action]:
        if job.status.has_job_master:
            return [CancelJobMaster(job.job_id)]
        if job.status is DispatcherJobStatus.ARCHIVED and not job.rescale_pending:
            assert job.archived is not None
            if job.archived.status is JobStatus.CANCELED:
                return []  # cancelling a cancelled job succeeds (Flink: idempotent, REST 202)
            raise JobAlreadyTerminalError(
                f"job {job.job_id} already reached {job.archived.result.status}, cannot be cancelled"
            )
        job.cancel_requested = True  # carried out when its JobMaster runs
        return []

    def _on_terminal(self, job: DispatcherJob, event: JobReachedTerminalState, now: float) -> list[Action]:
        if not job.status.has_job_master:
            raise IllegalJobTransitionError(
                f"job {job.job_id}: JobReachedTerminalState in state {job.status.name}"
            )
        rescaling = job.status is DispatcherJobStatus.RESCALING
        job.status = DispatcherJobStatus.ARCHIVED
        job.archived = event.archived
        self._jobs.move_to_end(job.job_id)
        actions: list[Action] = [StopJobMaster(job.job_id)]
        if rescaling and event.archived.status is JobStatus.FINISHED:
            job.rescale_pending = True  # not globally terminal: the job runs again (RescaleRestart)
        else:
            actions += [CleanupJobFiles(job.job_id), RecordJobResult(job.job_id, event.archived)]
        self._evict_over_capacity()
        return actions

    def _on_restore_archived(self, event: RestoreArchived, now: float) -> list[Action]:
        job_id = event.archived.info.job_id
        if job_id in self._jobs:
            return []  # running here already (recovered), or restored before
        self._jobs[job_id] = DispatcherJob(job_id, DispatcherJobStatus.ARCHIVED, archived=event.archived)
        self._evict_over_capacity()
        return []

    def _evict_over_capacity(self) -> None:
        archived = [j for j in self._jobs.values() if j.status is DispatcherJobStatus.ARCHIVED]
        for job in archived[: max(0, len(archived) - self._max_archived)]:
            if not job.rescale_pending:
                del self._jobs[job.job_id]

    def _expire(self, now: float) -> list[Action]:
        if now <= self._next_expiry:
            return []
        cutoff = now - self._archive_ttl_s
        earliest = float("inf")
        for job in list(self._jobs.values()):
            archived = job.archived
            expirable = job.status is DispatcherJobStatus.ARCHIVED and not job.rescale_pending
            if archived is not None and expirable:
                if archived.archived_at < cutoff:
                    del self._jobs[job.job_id]
                    self.archive_version += 1
                else:
                    earliest = min(earliest, archived.archived_at)
        self._next_expiry = earliest + self._archive_ttl_s
        return []


__all__ = [
    "Action",
    "ArchivedJob",
    "DispatcherJob",
    "DispatcherJobStatus",
    "DispatcherJobs",
    "Event",
]
