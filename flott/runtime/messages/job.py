"""What the Dispatcher answers about jobs (overviews, details, results)."""

from __future__ import annotations

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
