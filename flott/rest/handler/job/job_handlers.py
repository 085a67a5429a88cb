"""``/jobs``, ``/jobs/overview`` and the per-job views and actions (Flink: JobDetailsHandler,
JobCancellationHandler, JobExecutionResultHandler, JobExceptionsHandler, JobConfigHandler ...)."""

from __future__ import annotations

import base64
from typing import Any

import msgspec

from flott.configuration import masked
from flott.errors import FlottError, NotYetSupportedError, RestRequestError, WireError
from flott.rest.errors import TerminationModeRemovedError
from flott.rest.handler.handler import INT32_MAX, HandlerRequest, QueryParam, RestRoute
from flott.rest.handler.job import views
from flott.rest.messages.base import EmptyResponseBody
from flott.rest.messages.common import QueueStatus
from flott.rest.messages.job import (
    ExceptionInfo,
    ExecutionConfigInfo,
    JobAccumulatorsInfo,
    JobClientHeartbeatRequestBody,
    JobConfigInfo,
    JobDetails,
    JobDetailsInfo,
    JobExceptionHistory,
    JobExceptionsInfoWithHistory,
    JobExecutionResultResponseBody,
    JobIdsWithStatusOverview,
    JobIdWithStatus,
    JobPlanInfo,
    JobResultInfo,
    JobStatusInfo,
    JobVertexResourceRequirements,
    MultipleJobsDetails,
    Parallelism,
    RootExceptionInfo,
)
from flott.rest.serialized_throwable import to_serialized_throwable
from flott.runtime.messages.archived_execution_graph import ArchivedFailure
from flott.runtime.messages.job import JobDetails as RuntimeJobDetails
from flott.runtime.messages.job import JobsOverviewParts, insertion_points, interleave

_APPLICATION_STATUS: dict[str, Any] = {"FINISHED": "SUCCEEDED", "CANCELED": "CANCELED", "FAILED": "FAILED"}


async def list_jobs(req: HandlerRequest) -> JobIdsWithStatusOverview:
    details = await (await req.gateway()).request_multiple_job_details()
    return JobIdsWithStatusOverview(jobs=[JobIdWithStatus(id=d.job_id, status=d.status) for d in details])


_TASK_COUNT_KEYS = [(s, s.lower()) for s in views.EXECUTION_STATES]


def overview_row(d: RuntimeJobDetails) -> JobDetails:
    counts = d.task_counts
    tasks = {"total": d.num_tasks}
    for state, key in _TASK_COUNT_KEYS:
        tasks[key] = counts.get(state, 0)
    return JobDetails(
        jid=d.job_id,
        name=d.job_name,
        start_time=d.start_time,
        end_time=d.end_time,
        duration=d.duration,
        state=d.status,
        last_modification=d.last_modification,
        tasks=tasks,
        job_type="BATCH" if d.job_type == "BATCH" else "STREAMING",
    )


_encode_row = msgspec.json.Encoder().encode
_ENVELOPE_HEAD, _, _ENVELOPE_TAIL = _encode_row(
    MultipleJobsDetails(jobs=[msgspec.Raw(b"null")])  # type: ignore[list-item]  # spliced verbatim
).rpartition(b"null")
"""``{"jobs":[`` and ``]}``, as msgspec writes MultipleJobsDetails around its rows."""


class _OverviewBodies:
    """The ``/jobs/overview`` body, with the archived jobs' rows kept as JSON per archive version.

    The Dispatcher names the state of its archive (:class:`JobsOverviewParts`); while it stays
    the same the archived rows are neither sent again nor encoded again, and without running jobs
    the whole body is the one kept. Running jobs' rows (their durations move) are made for every
    answer and put among the archived ones by start time. The bytes are those of encoding
    ``MultipleJobsDetails`` with every row made afresh (tested).
    """

    def __init__(self) -> None:
        self.version = ""
        self._encoded: list[bytes] = []
        self._negated_starts: list[int] = []
        self._without_live: bytes | None = None

    def body(self, parts: JobsOverviewParts) -> bytes | None:
        """The body for ``parts``; None if they refer to archived rows that are not the ones kept
        (two answers crossed): then ask again with no known version."""
        if parts.archived is None:
            if parts.archived_version != self.version or not self.version:
                return None
            encoded, negated, without_live = self._encoded, self._negated_starts, self._without_live
        else:
            encoded = [_encode_row(overview_row(d)) for d in parts.archived]
            negated = [-d.start_time for d in parts.archived]
            without_live = None
            if parts.archived_version:
                self.version, self._encoded, self._negated_starts = parts.archived_version, encoded, negated
                self._without_live = None
        if not parts.live:
            if without_live is None:
                without_live = _ENVELOPE_HEAD + b",".join(encoded) + _ENVELOPE_TAIL
                if parts.archived_version and parts.archived_version == self.version:
                    self._without_live = without_live
            return without_live
        live = [_encode_row(overview_row(d)) for d in parts.live]
        rows = interleave(encoded, live, insertion_points(parts.live, negated))
        return _ENVELOPE_HEAD + b",".join(rows) + _ENVELOPE_TAIL


async def jobs_overview(req: HandlerRequest) -> msgspec.Raw:
    bodies = req.context.extras.get(_OVERVIEW_BODIES)
    if bodies is None:
        bodies = req.context.extras[_OVERVIEW_BODIES] = _OverviewBodies()
    gateway = await req.gateway()
    body = bodies.body(await gateway.request_jobs_overview(bodies.version))
    if body is None:
        body = bodies.body(await gateway.request_jobs_overview(""))
        assert body is not None
    return msgspec.Raw(body)


_OVERVIEW_BODIES = "jobs-overview-bodies"


async def job_details(req: HandlerRequest) -> JobDetailsInfo:
    graph = await (await req.gateway()).request_execution_graph(req.job_id())
    return views.job_details_info(graph)


async def job_status(req: HandlerRequest) -> JobStatusInfo:
    return JobStatusInfo(status=await (await req.gateway()).request_job_status(req.job_id()))


async def cancel_job(req: HandlerRequest) -> EmptyResponseBody:
    job_id = req.job_id()
    mode = (req.query("mode") or "cancel").lower()
    if mode == "stop":
        raise TerminationModeRemovedError(
            'The termination mode "stop" has been removed. For an ungraceful shutdown, please use "cancel" '
            'instead. For a graceful shutdown, please use "jobs/:jobId/stop" instead.'
        )
    if mode != "cancel":
        raise RestRequestError(
            f"Bad request, could not parse parameters: mode must be 'cancel', got {req.query('mode')!r}."
        )
    await (await req.gateway()).cancel_job(job_id)
    return EmptyResponseBody()


async def job_execution_result(req: HandlerRequest) -> JobExecutionResultResponseBody:
    job_id = req.job_id()
    gateway = await req.gateway()
    result = await gateway.request_job_result(job_id, 0.0)
    if result is None:
        return JobExecutionResultResponseBody(status=QueueStatus(id="IN_PROGRESS"))
    name: str | None = None
    start: int | None = None
    end: int | None = None
    try:
        info = await gateway.request_job(job_id)
        name, start, end = info.job_name, info.start_time, info.end_time
    except FlottError:
        pass  # the result is what matters; name and times are extras
    return JobExecutionResultResponseBody(
        status=QueueStatus(id="COMPLETED"),
        job_execution_result=JobResultInfo(
            id=result.job_id,
            application_status=_APPLICATION_STATUS.get(result.status, "UNKNOWN"),
            accumulator_results={
                name: base64.b64encode(value).decode("ascii")
                for name, value in result.accumulator_results.items()
            },
            net_runtime=result.net_runtime_ms,
            failure_cause=to_serialized_throwable(result.failure) if result.failure is not None else None,
            name=name,
            application_id=result.job_id,
            start_time=start,
            end_time=end,
        ),
    )


def exception_name(w: WireError) -> str:
    return w.exception_type or f"flott.errors.{w.type}"


def stack_trace(w: WireError) -> str:
    text = f"{exception_name(w)}: {w.exception_message or w.message}"
    return text + ("\n" + w.traceback.rstrip() if w.traceback else "")


_MAX_EXCEPTIONS = 20
"""Flink's default page size of the exception history (``maxExceptions``)."""


def _exception_info(f: ArchivedFailure) -> ExceptionInfo:
    return ExceptionInfo(
        exception_name=exception_name(f.error),
        stacktrace=stack_trace(f.error),
        timestamp=f.timestamp,
        task_name=f.task_name or None,
        endpoint=f.endpoint or None,
        task_manager_id=f.resource_id or None,
    )


async def job_exceptions(req: HandlerRequest) -> JobExceptionsInfoWithHistory:
    """The failures that restarted or failed the job, newest first, each with its concurrent ones.

    A global failure (no task to blame, e.g. too many failed checkpoints) has no task name or
    location, as in Flink.
    """
    max_exceptions = req.query_int("maxExceptions", -INT32_MAX - 1, INT32_MAX)
    limit = _MAX_EXCEPTIONS if max_exceptions is None else max(0, max_exceptions)
    graph = await (await req.gateway()).request_execution_graph(req.job_id())
    history = graph.exception_history
    entries = [
        RootExceptionInfo(
            exception_name=exception_name(f.error),
            stacktrace=stack_trace(f.error),
            timestamp=f.timestamp,
            task_name=f.task_name or None,
            endpoint=f.endpoint or None,
            task_manager_id=f.resource_id or None,
            concurrent_exceptions=[_exception_info(c) for c in f.concurrent],
        )
        for f in history[:limit]
    ]
    return JobExceptionsInfoWithHistory(
        exception_history=JobExceptionHistory(entries=entries, truncated=len(entries) < len(history))
    )


async def job_config(req: HandlerRequest) -> JobConfigInfo:
    graph = await (await req.gateway()).request_execution_graph(req.job_id())
    cfg = graph.job_config
    try:
        parallelism = int(cfg.get("parallelism.default", ""))
    except ValueError:
        parallelism = max((v.parallelism for v in graph.vertices), default=1)
    return JobConfigInfo(
        jid=graph.job_id,
        name=graph.job_name,
        execution_config=ExecutionConfigInfo(
            restart_strategy=graph.restart_strategy or "Restart deactivated.",
            job_parallelism=parallelism,
            object_reuse_mode=cfg.get("pipeline.object-reuse", "false").lower() == "true",
            user_config=masked(cfg),
        ),
    )


async def job_plan(req: HandlerRequest) -> JobPlanInfo:
    graph = await (await req.gateway()).request_execution_graph(req.job_id())
    return JobPlanInfo(plan=views.plan(graph))


async def job_accumulators(req: HandlerRequest) -> JobAccumulatorsInfo:
    req.query_bool("includeSerializedValue")  # validated; there is nothing to serialise
    await (await req.gateway()).request_job_status(req.job_id())  # 404 for an unknown job
    return JobAccumulatorsInfo()


async def client_heartbeat(req: HandlerRequest) -> EmptyResponseBody:
    job_id = req.job_id()
    body = await req.body(JobClientHeartbeatRequestBody)
    await (await req.gateway()).report_job_client_heartbeat(job_id, body.expired_timestamp)
    return EmptyResponseBody()


async def get_resource_requirements(req: HandlerRequest) -> dict[str, JobVertexResourceRequirements]:
    """Per vertex: at least 1, at most its parallelism (the default scheduler's fixed requirements)."""
    graph = await (await req.gateway()).request_execution_graph(req.job_id())
    return {
        v.id: JobVertexResourceRequirements(parallelism=Parallelism(lower_bound=1, upper_bound=v.parallelism))
        for v in graph.vertices
    }


async def put_resource_requirements(req: HandlerRequest) -> EmptyResponseBody:
    job_id = req.job_id()
    await req.body(dict[str, JobVertexResourceRequirements], "JobResourceRequirementsBody")
    await (await req.gateway()).request_job_status(job_id)
    raise NotYetSupportedError(
        "Changing a running job's resource requirements needs the adaptive scheduler, which flott does not "
        f"have yet. To run the job at another parallelism, use PATCH /jobs/{job_id}/rescaling?parallelism=N "
        "(a savepoint, then a restart from it)."
    )


_JOB = "/jobs/{jobid}"

ROUTES = [
    RestRoute(
        "GET",
        "/jobs",
        list_jobs,
        summary="Returns an overview over all jobs and their current state.",
        response_type=JobIdsWithStatusOverview,
        operation_id="getJobIdsWithStatusesOverview",
        shared=True,
    ),
    RestRoute(
        "GET",
        "/jobs/overview",
        jobs_overview,
        summary="Returns an overview over all jobs.",
        response_type=MultipleJobsDetails,
        operation_id="getJobsOverview",
        shared=True,
    ),
    RestRoute(
        "GET",
        _JOB,
        job_details,
        summary="Returns details of a job.",
        response_type=JobDetailsInfo,
        operation_id="getJobDetails",
    ),
    RestRoute(
        "PATCH",
        _JOB,
        cancel_job,
        status=202,
        summary="Terminates a job (mode=cancel).",
        response_type=EmptyResponseBody,
        operation_id="cancelJob",
        query=(
            QueryParam(
                "mode",
                'Termination mode; the only supported value is "cancel".',
                {"type": "string", "enum": ["cancel", "stop"]},
            ),
        ),
    ),
    RestRoute(
        "GET",
        f"{_JOB}/status",
        job_status,
        summary="Returns the current status of a job execution.",
        response_type=JobStatusInfo,
        operation_id="getJobStatusInfo",
    ),
    RestRoute(
        "GET",
        f"{_JOB}/execution-result",
        job_execution_result,
        summary="Returns the result of a job execution; IN_PROGRESS until the job is globally terminal.",
        response_type=JobExecutionResultResponseBody,
        operation_id="getJobExecutionResult",
    ),
    RestRoute(
        "GET",
        f"{_JOB}/exceptions",
        job_exceptions,
        summary="Returns the failure history of a job: every failure that restarted or failed it.",
        response_type=JobExceptionsInfoWithHistory,
        operation_id="getJobExceptions",
        query=(
            QueryParam("maxExceptions", "Maximum number of entries.", {"type": "integer", "format": "int32"}),
        ),
    ),
    RestRoute(
        "GET",
        f"{_JOB}/config",
        job_config,
        summary="Returns the configuration of a job.",
        response_type=JobConfigInfo,
        operation_id="getJobConfig",
    ),
    RestRoute(
        "GET",
        f"{_JOB}/plan",
        job_plan,
        summary="Returns the dataflow plan of a job.",
        response_type=JobPlanInfo,
        operation_id="getJobPlan",
    ),
    RestRoute(
        "GET",
        f"{_JOB}/accumulators",
        job_accumulators,
        summary="Returns the accumulators of a job (flott has none yet: empty lists).",
        response_type=JobAccumulatorsInfo,
        operation_id="getJobAccumulators",
        query=(QueryParam("includeSerializedValue", "Ignored (no accumulators).", {"type": "boolean"}),),
    ),
    RestRoute(
        "PATCH",
        f"{_JOB}/clientHeartbeat",
        client_heartbeat,
        status=202,
        summary="Reports that an attached client is alive (recorded, not yet enforced).",
        request_type=JobClientHeartbeatRequestBody,
        response_type=EmptyResponseBody,
        operation_id="triggerHeartbeat",
    ),
    RestRoute(
        "GET",
        f"{_JOB}/resource-requirements",
        get_resource_requirements,
        summary="Returns the per-vertex parallelism bounds of a job.",
        response_type=dict[str, JobVertexResourceRequirements],
        operation_id="getJobResourceRequirements",
    ),
    RestRoute(
        "PUT",
        f"{_JOB}/resource-requirements",
        put_resource_requirements,
        summary="Changes parallelism bounds (needs the adaptive scheduler: 501 in flott for now).",
        request_type=dict[str, JobVertexResourceRequirements],
        response_type=EmptyResponseBody,
        operation_id="updateJobResourceRequirements",
    ),
]
