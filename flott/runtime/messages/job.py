"""What the Dispatcher answers about jobs (overviews, details, results)."""

from __future__ import annotations

from bisect import bisect_left
from typing import TypeVar

import msgspec

from flott.errors import WireError


class JobDetails(msgspec.Struct, frozen=True):
    """One row of the jobs overview (Flink's JobDetails)."""

    job_id: str
    job_name: str
    status: str
    start_time: int
    end_time: int
    duration: int
    last_modification: int
    task_counts: dict[str, int]
    num_tasks: int
    job_type: str = "STREAMING"


class JobsOverviewParts(msgspec.Struct, frozen=True):
    """The jobs overview as its two parts, so that a reader can keep what it made of the archived
    jobs' rows (their JSON) for as long as the archive does not change.

    ``live``: the jobs with a JobMaster, newest first. ``archived``: the archived jobs' rows,
    newest first, or None when they are the ones of ``archived_version``, the version the caller
    said it has. ``archived_version`` names this archive's state (the Dispatcher instance and the
    archive's change counter); empty when these rows are not to be kept. The overview is the two
    merged by :func:`insertion_points` and :func:`interleave`, as one stable sort by start time,
    newest first, with the live rows first, would order them.
    """

    live: list[JobDetails]
    archived: list[JobDetails] | None
    archived_version: str


T = TypeVar("T")


def insertion_points(live: list[JobDetails], archived_negated_starts: list[int]) -> list[int]:
    """Where each of ``live`` (newest first) goes among archived rows (newest first) whose start
    times, negated, are ``archived_negated_starts``: before the archived rows started at the same
    time, as ``sorted(live + archived, key=start_time, reverse=True)`` places it."""
    return [bisect_left(archived_negated_starts, -d.start_time) for d in live]


def interleave(archived: list[T], live: list[T], points: list[int]) -> list[T]:
    """``archived`` with ``live[i]`` put before ``archived[points[i]]`` (``points`` ascending)."""
    out: list[T] = []
    start = 0
    for point, row in zip(points, live, strict=True):
        out += archived[start:point]
        out.append(row)
        start = point
    out += archived[start:]
    return out


class VertexDetails(msgspec.Struct, frozen=True):
    id: str
    name: str
    parallelism: int
    max_parallelism: int
    status: str
    start_time: int
    end_time: int
    duration: int
    task_counts: dict[str, int]
    records_in: int
    records_out: int
    subtask_states: list[str] = []
    subtask_hosts: list[str] = []


class ExecutionGraphInfo(msgspec.Struct, frozen=True):
    """A job's execution graph as REST and clients see it (live or archived)."""

    job_id: str
    job_name: str
    status: str
    start_time: int
    end_time: int
    duration: int
    now: int
    timestamps: dict[str, int]
    vertices: list[VertexDetails]
    max_parallelism: int
    job_type: str = "STREAMING"
    failure: WireError | None = None
    plan_json: str = ""


class JobResult(msgspec.Struct, frozen=True):
    """The outcome of a job that reached a globally terminal state."""

    job_id: str
    status: str
    net_runtime_ms: int
    failure: WireError | None = None
    accumulator_results: dict[str, bytes] = {}
    """Accumulators by name, serialized by the TaskExecutors (the JobManager never decodes them)."""


class ClusterOverview(msgspec.Struct, frozen=True):
    taskmanagers: int
    slots_total: int
    slots_available: int
    jobs_running: int
    jobs_finished: int
    jobs_cancelled: int
    jobs_failed: int


class OperationStatus(msgspec.Struct, frozen=True):
    """State of an asynchronous job operation (savepoint, stop, checkpoint, disposal, rescale).

    ``status`` is ``IN_PROGRESS`` or ``COMPLETED``; a completed operation has either a
    ``location`` (savepoint path; empty for disposal), and for checkpoints a ``checkpoint_id``,
    or a ``failure``.
    """

    status: str
    location: str | None = None
    checkpoint_id: int | None = None
    failure: WireError | None = None
