"""A job's execution graph down to each subtask attempt, as the Dispatcher hands it to REST.

Flink's REST handlers read an ``ArchivedExecutionGraph`` (job, vertices,
subtask attempts, their state timestamps, failures and IO metrics) and derive
every job/vertex/subtask view from it. This is flott's wire form of that
snapshot: plain data, built by the Dispatcher from the live JobMaster (or kept
when the job ends), so a REST endpoint in another process can serve the same
views through the gateway alone.
"""

from __future__ import annotations

import msgspec

from flott.errors import WireError


class ArchivedExecution(msgspec.Struct, frozen=True, kw_only=True):
    """The current attempt of one subtask.

    ``endpoint`` is the data address (``host:port``) of the TaskExecutor the
    attempt runs on, ``""`` while unassigned. The IO counters are what the
    TaskExecutor last reported in its heartbeat; ``metrics_reported`` says
    whether any report arrived (Flink's ``*-complete`` flags).
    """

    subtask_index: int
    attempt_number: int
    state: str
    resource_id: str = ""
    endpoint: str = ""
    state_timestamps: dict[str, int] = {}
    failure: WireError | None = None
    metrics_reported: bool = False
    records_in: int = 0
    records_out: int = 0
    buffers_in: int = 0
    buffers_out: int = 0
    busy_time_ns: int = 0
    back_pressured_time_ns: int = 0
    idle_time_ns: int = 0
    user_metrics: dict[str, str] = {}
    """User metrics by Flink's query-scope name (``<operator>.<groups>.<name>``), values as strings."""


class ArchivedJobVertex(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    name: str
    parallelism: int
    max_parallelism: int
    operator_names: list[str] = []
    subtasks: list[ArchivedExecution] = []
    prior_attempts: list[ArchivedExecution] = []
    """Attempts before the current one of every subtask (those a restart replaced), oldest first."""


class ArchivedFailure(msgspec.Struct, frozen=True, kw_only=True):
    """One entry of the exception history (Flink: RootExceptionHistoryEntry / ExceptionHistoryEntry).

    ``task_name`` is ``"<vertex> (i/n)"``, empty for a global failure (then the
    location fields are empty too); ``concurrent`` are the other failures of
    the same job attempt (nested entries have none of their own).
    """

    error: WireError
    timestamp: int
    task_name: str = ""
    endpoint: str = ""
    resource_id: str = ""
    concurrent: list[ArchivedFailure] = []


class ArchivedJobEdge(msgspec.Struct, frozen=True, kw_only=True):
    """An edge of the plan: ``source`` feeds input ``target_input`` of ``target`` via ``partitioner``."""

    source: str
    target: str
    partitioner: str
    target_input: int = 0


class ArchivedExecutionGraph(msgspec.Struct, frozen=True, kw_only=True):
    """Flink's ArchivedExecutionGraph, reduced to what flott's runtime knows.

    ``failure_timestamp`` is when the job started failing (the root
    exception's time), 0 if it did not fail. ``job_config`` is the
    JobGraph's configuration (strings), the source of ``/jobs/:id/config``.
    """

    job_id: str
    job_name: str
    status: str
    job_type: str
    state_timestamps: dict[str, int]
    now: int
    max_parallelism: int
    vertices: list[ArchivedJobVertex]
    edges: list[ArchivedJobEdge] = []
    failure: WireError | None = None
    failure_timestamp: int = 0
    job_config: dict[str, str] = {}
    num_restarts: int = 0
    restart_strategy: str = ""
    """The restart strategy the job runs with, as Flink's web UI describes it."""
    exception_history: list[ArchivedFailure] = []
    """The failures that restarted or failed the job, newest first (Flink's order)."""
