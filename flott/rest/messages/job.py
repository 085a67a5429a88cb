"""Messages of the ``/jobs`` endpoints (overview, details, status, result, plan, config, exceptions)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import msgspec

from flott.rest.messages.base import RequestBody, ResponseBody, TriggerId
from flott.rest.messages.common import QueueStatus, SerializedThrowable

JobType = Literal["BATCH", "STREAMING"]
SchedulerType = Literal["Default", "Adaptive", "AdaptiveBatch"]


class JobIdWithStatus(ResponseBody, frozen=True, kw_only=True):
    id: str
    status: str


class JobIdsWithStatusOverview(ResponseBody, frozen=True, kw_only=True):
    """``GET /jobs``."""

    jobs: list[JobIdWithStatus]


class JobDetails(ResponseBody, frozen=True, kw_only=True):
    """One row of ``GET /jobs/overview`` (``tasks`` counts use lower-case state names plus ``total``)."""

    jid: str
    name: str
    start_time: int = msgspec.field(name="start-time")
    end_time: int = msgspec.field(name="end-time")
    duration: int
    state: str
    last_modification: int = msgspec.field(name="last-modification")
    tasks: dict[str, int]
    pending_operators: int = msgspec.field(default=0, name="pending-operators")
    job_type: JobType = msgspec.field(default="STREAMING", name="jobType")
    scheduler_type: SchedulerType = msgspec.field(default="Default", name="schedulerType")


class MultipleJobsDetails(ResponseBody, frozen=True, kw_only=True):
    """``GET /jobs/overview``."""

    jobs: list[JobDetails]


class IOMetricsInfo(ResponseBody, frozen=True, kw_only=True):
    """Records, bytes and time counters of a vertex or subtask.

    flott's TaskExecutors report records and buffers, not bytes: the byte
    counters are 0 and their ``*-complete`` flags false.
    """

    read_bytes: int = msgspec.field(default=0, name="read-bytes")
    read_bytes_complete: bool = msgspec.field(default=False, name="read-bytes-complete")
    write_bytes: int = msgspec.field(default=0, name="write-bytes")
    write_bytes_complete: bool = msgspec.field(default=False, name="write-bytes-complete")
    read_records: int = msgspec.field(default=0, name="read-records")
    read_records_complete: bool = msgspec.field(default=False, name="read-records-complete")
    write_records: int = msgspec.field(default=0, name="write-records")
    write_records_complete: bool = msgspec.field(default=False, name="write-records-complete")
    accumulated_backpressured_time: int = msgspec.field(default=0, name="accumulated-backpressured-time")
    accumulated_idle_time: int = msgspec.field(default=0, name="accumulated-idle-time")
    accumulated_busy_time: float = msgspec.field(default=0.0, name="accumulated-busy-time")


class JobDetailsVertexInfo(ResponseBody, frozen=True, kw_only=True):
    """A vertex inside ``GET /jobs/:jobid``."""

    id: str
    name: str
    max_parallelism: int = msgspec.field(name="maxParallelism")
    parallelism: int
    status: str
    start_time: int = msgspec.field(name="start-time")
    end_time: int = msgspec.field(name="end-time")
    duration: int
    tasks: dict[str, int]
    metrics: IOMetricsInfo


class PlanInput(ResponseBody, frozen=True, kw_only=True):
    num: int
    id: str
    ship_strategy: str
    exchange: str = "pipelined_bounded"


class PlanNode(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    id: str
    parallelism: int
    operator: str = ""
    operator_strategy: str = ""
    description: str = ""
    inputs: list[PlanInput] = []
    optimizer_properties: dict[str, str] = {}


class Plan(ResponseBody, frozen=True, kw_only=True):
    jid: str
    name: str
    type: JobType
    nodes: list[PlanNode]


class JobPlanInfo(ResponseBody, frozen=True, kw_only=True):
    """``GET /jobs/:jobid/plan``."""

    plan: Plan


class JobDetailsInfo(ResponseBody, frozen=True, kw_only=True):
    """``GET /jobs/:jobid``: ``timestamps`` has every JobStatus (0 = not reached), ``status-counts``
    every ExecutionState."""

    jid: str
    name: str
    is_stoppable: bool = msgspec.field(default=False, name="isStoppable")
    state: str
    job_type: JobType = msgspec.field(name="job-type")
    start_time: int = msgspec.field(name="start-time")
    end_time: int = msgspec.field(name="end-time")
    duration: int
    max_parallelism: int = msgspec.field(name="maxParallelism")
    now: int
    timestamps: dict[str, int]
    vertices: list[JobDetailsVertexInfo]
    status_counts: dict[str, int] = msgspec.field(name="status-counts")
    plan: Plan
    pending_operators: int = msgspec.field(default=0, name="pending-operators")
    scheduler_type: SchedulerType = msgspec.field(default="Default", name="schedulerType")


class JobStatusInfo(ResponseBody, frozen=True, kw_only=True):
    """``GET /jobs/:jobid/status``."""

    status: str


ApplicationStatus = Literal["SUCCEEDED", "FAILED", "CANCELED", "UNKNOWN"]


class JobResultInfo(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    """``job-execution-result`` as Flink's JobResult serializer writes it (not as its spec shows it)."""

    id: str
    application_status: ApplicationStatus = msgspec.field(name="application-status")
    accumulator_results: dict[str, Any] = msgspec.field(name="accumulator-results")  # always written
    net_runtime: int = msgspec.field(name="net-runtime")
    failure_cause: SerializedThrowable | None = msgspec.field(default=None, name="failure-cause")
    name: str | None = None
    application_id: str | None = msgspec.field(default=None, name="application-id")
    start_time: int | None = msgspec.field(default=None, name="start-time")
    end_time: int | None = msgspec.field(default=None, name="end-time")


class JobExecutionResultResponseBody(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    """``{"status":{"id":"IN_PROGRESS"}}`` until the job is globally terminal, then with the result."""

    status: QueueStatus
    job_execution_result: JobResultInfo | None = msgspec.field(default=None, name="job-execution-result")


class ExceptionInfo(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    """A concurrent (secondary) failure of one subtask."""

    exception_name: str = msgspec.field(name="exceptionName")
    stacktrace: str
    timestamp: int
    task_name: str | None = msgspec.field(default=None, name="taskName")
    endpoint: str | None = None
    task_manager_id: str | None = msgspec.field(default=None, name="taskManagerId")
    failure_labels: dict[str, str] = msgspec.field(default_factory=dict, name="failureLabels")


class RootExceptionInfo(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    """The failure that made the job fail (or restart), with the failures that came with it."""

    exception_name: str = msgspec.field(name="exceptionName")
    stacktrace: str
    timestamp: int
    task_name: str | None = msgspec.field(default=None, name="taskName")
    endpoint: str | None = None
    task_manager_id: str | None = msgspec.field(default=None, name="taskManagerId")
    failure_labels: dict[str, str] = msgspec.field(default_factory=dict, name="failureLabels")
    concurrent_exceptions: list[ExceptionInfo] = msgspec.field(
        default_factory=list, name="concurrentExceptions"
    )


class JobExceptionHistory(ResponseBody, frozen=True, kw_only=True):
    entries: list[RootExceptionInfo]
    truncated: bool


class JobExceptionsInfoWithHistory(ResponseBody, frozen=True, kw_only=True):
    """``GET /jobs/:jobid/exceptions``."""

    exception_history: JobExceptionHistory = msgspec.field(name="exceptionHistory")


class ExecutionConfigInfo(ResponseBody, frozen=True, kw_only=True):
    restart_strategy: str = msgspec.field(name="restart-strategy")
    job_parallelism: int = msgspec.field(name="job-parallelism")
    object_reuse_mode: bool = msgspec.field(name="object-reuse-mode")
    user_config: dict[str, str] = msgspec.field(name="user-config")


class JobConfigInfo(ResponseBody, frozen=True, kw_only=True):
    """``GET /jobs/:jobid/config`` as Flink's custom serializer writes it (``jid``, ``name``,
    ``execution-config``), not as its spec shows it."""

    jid: str
    name: str
    execution_config: ExecutionConfigInfo = msgspec.field(name="execution-config")


class UserTaskAccumulator(ResponseBody, frozen=True, kw_only=True):
    name: str
    type: str
    value: str


class JobAccumulatorsInfo(ResponseBody, frozen=True, kw_only=True):
    """``GET /jobs/:jobid/accumulators``: flott has no accumulators yet, so the lists are empty."""

    job_accumulators: list[dict[str, str]] = msgspec.field(default_factory=list, name="job-accumulators")
    user_task_accumulators: list[UserTaskAccumulator] = msgspec.field(
        default_factory=list, name="user-task-accumulators"
    )
    serialized_user_task_accumulators: dict[str, str] = msgspec.field(
        default_factory=dict, name="serialized-user-task-accumulators"
    )


class Parallelism(ResponseBody, frozen=True, kw_only=True):
    lower_bound: int = msgspec.field(name="lowerBound")
    upper_bound: int = msgspec.field(name="upperBound")


class JobVertexResourceRequirements(ResponseBody, frozen=True, kw_only=True):
    parallelism: Parallelism


class JobClientHeartbeatRequestBody(RequestBody, frozen=True, kw_only=True):
    """``PATCH /jobs/:jobid/clientHeartbeat``."""

    expired_timestamp: int = msgspec.field(name="expiredTimestamp")


# -- submission --------------------------------------------------------------------------------


class DistributedCacheFile(RequestBody, frozen=True, kw_only=True):
    entry_name: str = msgspec.field(name="entryName")
    file_name: str = msgspec.field(name="fileName")


class JobSubmitRequestBody(RequestBody, frozen=True, kw_only=True):
    """The ``request`` part of ``POST /jobs``.

    Flink 1.x clients name the graph file ``jobGraphFileName``, Flink 2.x
    clients ``executionPlanFileName``; either is accepted, one is required.
    """

    openapi_schema: ClassVar[dict[str, Any]] = {
        "anyOf": [
            {"required": [name], "properties": {name: {"type": "string"}}}
            for name in ("jobGraphFileName", "executionPlanFileName")
        ]
    }

    job_graph_file_name: str | None = msgspec.field(default=None, name="jobGraphFileName")
    execution_plan_file_name: str | None = msgspec.field(default=None, name="executionPlanFileName")
    job_jar_file_names: list[str] = msgspec.field(default_factory=list, name="jobJarFileNames")
    job_artifact_file_names: list[DistributedCacheFile] = msgspec.field(
        default_factory=list, name="jobArtifactFileNames"
    )


class JobSubmitResponseBody(ResponseBody, frozen=True, kw_only=True):
    """``202 {"jobUrl": "/jobs/<jobid>"}`` (no ``/v1`` in the URL, as Flink)."""

    job_url: str = msgspec.field(name="jobUrl")


# -- savepoints, stop, checkpoints, disposal (request bodies) ------------------------------------

SavepointFormatType = Literal["CANONICAL", "NATIVE"]
CheckpointType = Literal["CONFIGURED", "FULL", "INCREMENTAL"]


class SavepointTriggerRequestBody(RequestBody, frozen=True, kw_only=True):
    """``POST /jobs/:jobid/savepoints`` (kebab-case directory, camelCase format and trigger id)."""

    target_directory: str | None = msgspec.field(default=None, name="target-directory")
    cancel_job: bool = msgspec.field(default=False, name="cancel-job")
    format_type: SavepointFormatType = msgspec.field(default="CANONICAL", name="formatType")
    trigger_id: TriggerId | None = msgspec.field(default=None, name="triggerId")


class StopWithSavepointRequestBody(RequestBody, frozen=True, kw_only=True):
    """``POST /jobs/:jobid/stop`` (all camelCase)."""

    target_directory: str | None = msgspec.field(default=None, name="targetDirectory")
    drain: bool = False
    format_type: SavepointFormatType = msgspec.field(default="CANONICAL", name="formatType")
    trigger_id: TriggerId | None = msgspec.field(default=None, name="triggerId")


class CheckpointTriggerRequestBody(RequestBody, frozen=True, kw_only=True):
    """``POST /jobs/:jobid/checkpoints``.

    ``INCREMENTAL`` is decoded only to be refused with Flink's reason (FLINK-33723)."""

    openapi_schema: ClassVar[dict[str, Any]] = {
        "properties": {"checkpointType": {"enum": ["CONFIGURED", "FULL"], "default": "CONFIGURED"}}
    }

    checkpoint_type: CheckpointType = msgspec.field(default="CONFIGURED", name="checkpointType")
    trigger_id: TriggerId | None = msgspec.field(default=None, name="triggerId")


class SavepointDisposalRequest(RequestBody, frozen=True, kw_only=True):
    """``POST /savepoint-disposal``.

    The path is optional to the decoder only so that its absence gets Flink's message."""

    openapi_schema: ClassVar[dict[str, Any]] = {
        "required": ["savepoint-path"],
        "properties": {
            "savepoint-path": {
                "type": "string",
                # What StoragePathPolicy admits with the default flott.storage.allowed-schemes (file):
                # an absolute path or file:/// URL, no control characters, no chained URL.
                "pattern": "^(?!.*::)\\s*(/|file:///)[^\\u0000-\\u001f]*$",
            }
        },
    }

    savepoint_path: str | None = msgspec.field(default=None, name="savepoint-path")
