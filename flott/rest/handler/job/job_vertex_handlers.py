"""``/jobs/:jobid/vertices/:vertexid/...`` (Flink: JobVertexDetailsHandler,
SubtaskCurrentAttemptDetailsHandler, SubtasksTimesHandler, JobVertexTaskManagersHandler,
JobVertexBackPressureHandler, accumulators).

Back pressure is computed, as Flink does since 1.13, from each running
subtask's ``backPressuredTimeMsPerSecond``, ``idleTimeMsPerSecond`` and
``busyTimeMsPerSecond`` (the last update interval, from the metric fetcher);
a subtask without live metrics (ended, or not yet fetched) falls back to the
accumulated times it reported last, i.e. averages over its life.
Accumulators: flott has none, the lists are empty.
"""

from __future__ import annotations

from collections import defaultdict

from flott.rest.errors import RestNotFoundError
from flott.rest.handler.handler import HandlerRequest, RestRoute, now_ms
from flott.rest.handler.job import views
from flott.rest.handler.job.job_metrics_handlers import subtask_of, vertex_of
from flott.rest.handler.metric_fetcher import fetched_metrics
from flott.rest.handler.metrics import GET_PARAM
from flott.rest.messages.common import Metric
from flott.rest.messages.vertex import (
    BackPressureLevel,
    JobVertexAccumulatorsInfo,
    JobVertexBackPressureInfo,
    JobVertexDetailsInfo,
    JobVertexTaskManagerInfo,
    JobVertexTaskManagersInfo,
    SubtaskAccumulatorsInfo,
    SubtaskBackPressureInfo,
    SubtaskExecutionAttemptAccumulatorsInfo,
    SubtaskExecutionAttemptDetailsInfo,
    SubtasksAllAccumulatorsInfo,
    SubtasksTimesInfo,
    SubtaskTimeInfo,
)
from flott.runtime.messages.archived_execution_graph import ArchivedExecution, ArchivedJobVertex


async def vertex_details(req: HandlerRequest) -> JobVertexDetailsInfo:
    graph, vertex = await vertex_of(req)
    return JobVertexDetailsInfo(
        id=vertex.id,
        name=vertex.name,
        max_parallelism=vertex.max_parallelism,
        parallelism=vertex.parallelism,
        now=graph.now,
        subtasks=[views.subtask_details(ex, graph.now) for ex in vertex.subtasks],
        aggregated=views.aggregated_details(vertex.subtasks, graph.now),
    )


async def subtask_current_attempt(req: HandlerRequest) -> SubtaskExecutionAttemptDetailsInfo:
    graph, vertex = await vertex_of(req)
    return views.subtask_details(subtask_of(req, vertex), graph.now)


def _attempt_of(req: HandlerRequest, ex: ArchivedExecution, vertex: ArchivedJobVertex) -> ArchivedExecution:
    """The current attempt or a prior one a restart replaced (the last 16 are kept, as in Flink)."""
    attempt = req.int_param("attempt")
    if attempt == ex.attempt_number:
        return ex
    for prior in vertex.prior_attempts:
        if prior.subtask_index == ex.subtask_index and prior.attempt_number == attempt:
            return prior
    raise RestNotFoundError(
        f"Attempt {attempt} not found in subtask {vertex.name} ({ex.subtask_index + 1}/{vertex.parallelism})."
    )


async def subtask_attempt(req: HandlerRequest) -> SubtaskExecutionAttemptDetailsInfo:
    graph, vertex = await vertex_of(req)
    return views.subtask_details(_attempt_of(req, subtask_of(req, vertex), vertex), graph.now)


async def subtask_times(req: HandlerRequest) -> SubtasksTimesInfo:
    graph, vertex = await vertex_of(req)
    subtasks = []
    for ex in vertex.subtasks:
        _, _, duration = views.subtask_times(ex, graph.now)
        subtasks.append(
            SubtaskTimeInfo(
                subtask=ex.subtask_index,
                endpoint=ex.endpoint or "(unassigned)",
                duration=duration,
                timestamps=dict(ex.state_timestamps),
            )
        )
    return SubtasksTimesInfo(id=vertex.id, name=vertex.name, now=graph.now, subtasks=subtasks)


async def vertex_taskmanagers(req: HandlerRequest) -> JobVertexTaskManagersInfo:
    graph, vertex = await vertex_of(req)
    by_tm: dict[tuple[str, str], list[ArchivedExecution]] = defaultdict(list)
    for ex in vertex.subtasks:
        by_tm[(ex.endpoint or "(unassigned)", ex.resource_id or "(unassigned)")].append(ex)
    tms = []
    for (endpoint, tm_id), subtasks in sorted(by_tm.items()):
        start, end, duration = views.vertex_times(subtasks, graph.now)
        tms.append(
            JobVertexTaskManagerInfo(
                endpoint=endpoint,
                taskmanager_id=tm_id,
                status=views.aggregate_state([ex.state for ex in subtasks]),
                start_time=start,
                end_time=end,
                duration=duration,
                metrics=views.io_metrics(subtasks),
                status_counts=views.state_counts(ex.state for ex in subtasks),
                aggregated=views.aggregated_details(subtasks, graph.now),
            )
        )
    return JobVertexTaskManagersInfo(id=vertex.id, name=vertex.name, now=graph.now, taskmanagers=tms)


def _level(ratio: float) -> BackPressureLevel:
    return "ok" if ratio <= 0.10 else "low" if ratio <= 0.5 else "high"


def _live_ratios(metrics: dict[str, str] | None) -> tuple[float, float, float] | None:
    """(back-pressured, idle, busy) shares of the last interval, if the subtask reports them."""
    if metrics is None:
        return None
    try:
        return tuple(  # type: ignore[return-value]
            float(metrics[n]) / 1000.0
            for n in ("backPressuredTimeMsPerSecond", "idleTimeMsPerSecond", "busyTimeMsPerSecond")
        )
    except (KeyError, ValueError):
        return None


async def back_pressure(req: HandlerRequest) -> JobVertexBackPressureInfo:
    graph, vertex = await vertex_of(req)
    store = await fetched_metrics(req)
    subtasks = []
    for ex in vertex.subtasks:
        live = _live_ratios(store.subtask(graph.job_id, vertex.id, ex.subtask_index, ex.attempt_number))
        if live is not None:
            ratio, idle, busy = live
        else:
            total = ex.busy_time_ns + ex.back_pressured_time_ns + ex.idle_time_ns
            if not ex.metrics_reported or total <= 0:
                continue
            ratio, idle, busy = (
                ex.back_pressured_time_ns / total, ex.idle_time_ns / total, ex.busy_time_ns / total
            )
        subtasks.append(
            SubtaskBackPressureInfo(
                subtask=ex.subtask_index,
                attempt_number=ex.attempt_number,
                backpressure_level=_level(ratio),
                ratio=round(ratio, 4),
                idle_ratio=round(idle, 4),
                busy_ratio=round(busy, 4),
            )
        )
    if not subtasks:
        return JobVertexBackPressureInfo(
            status="deprecated", backpressure_level="ok", end_timestamp=now_ms(), subtasks=[]
        )
    return JobVertexBackPressureInfo(
        status="ok",
        backpressure_level=_level(max(s.ratio for s in subtasks)),
        end_timestamp=now_ms(),
        subtasks=subtasks,
    )


async def vertex_accumulators(req: HandlerRequest) -> JobVertexAccumulatorsInfo:
    _, vertex = await vertex_of(req)
    return JobVertexAccumulatorsInfo(id=vertex.id, user_accumulators=[])


async def subtasks_accumulators(req: HandlerRequest) -> SubtasksAllAccumulatorsInfo:
    _, vertex = await vertex_of(req)
    return SubtasksAllAccumulatorsInfo(
        id=vertex.id,
        parallelism=vertex.parallelism,
        subtasks=[
            SubtaskAccumulatorsInfo(
                subtask=ex.subtask_index,
                attempt=ex.attempt_number,
                endpoint=ex.endpoint or "(unassigned)",
                user_accumulators=[],
            )
            for ex in vertex.subtasks
        ],
    )


async def attempt_accumulators(req: HandlerRequest) -> SubtaskExecutionAttemptAccumulatorsInfo:
    _, vertex = await vertex_of(req)
    ex = _attempt_of(req, subtask_of(req, vertex), vertex)
    return SubtaskExecutionAttemptAccumulatorsInfo(
        subtask=ex.subtask_index, attempt=ex.attempt_number, id=vertex.id, user_accumulators=[]
    )


async def jm_operator_metrics(req: HandlerRequest) -> list[Metric]:
    """Metrics of the vertex's operator coordinators on the JobManager: flott has no coordinators."""
    await vertex_of(req)
    return []


_V = "/jobs/{jobid}/vertices/{vertexid}"
_S = _V + "/subtasks/{subtaskindex}"

ROUTES = [
    RestRoute(
        "GET",
        _V,
        vertex_details,
        summary="Details of a job vertex and its subtasks.",
        response_type=JobVertexDetailsInfo,
        operation_id="getJobVertexDetails",
    ),
    RestRoute(
        "GET",
        f"{_V}/backpressure",
        back_pressure,
        summary="Back pressure of a vertex (each running subtask's last interval).",
        response_type=JobVertexBackPressureInfo,
        operation_id="getJobVertexBackPressure",
    ),
    RestRoute(
        "GET",
        f"{_V}/subtasktimes",
        subtask_times,
        summary="State timestamps of every subtask.",
        response_type=SubtasksTimesInfo,
        operation_id="getSubtasksTimes",
    ),
    RestRoute(
        "GET",
        f"{_V}/taskmanagers",
        vertex_taskmanagers,
        summary="A vertex's subtasks grouped by TaskManager.",
        response_type=JobVertexTaskManagersInfo,
        operation_id="getJobVertexTaskManagers",
    ),
    RestRoute(
        "GET",
        _S,
        subtask_current_attempt,
        summary="The current attempt of a subtask.",
        response_type=SubtaskExecutionAttemptDetailsInfo,
        operation_id="getSubtaskCurrentAttemptDetails",
    ),
    RestRoute(
        "GET",
        f"{_S}/attempts/{{attempt}}",
        subtask_attempt,
        summary="One attempt of a subtask.",
        response_type=SubtaskExecutionAttemptDetailsInfo,
        operation_id="getSubtaskExecutionAttemptDetails",
    ),
    RestRoute(
        "GET",
        f"{_V}/accumulators",
        vertex_accumulators,
        summary="User accumulators (none in flott).",
        response_type=JobVertexAccumulatorsInfo,
        operation_id="getJobVertexAccumulators",
    ),
    RestRoute(
        "GET",
        f"{_V}/subtasks/accumulators",
        subtasks_accumulators,
        summary="User accumulators of every subtask (none in flott).",
        response_type=SubtasksAllAccumulatorsInfo,
        operation_id="getSubtasksAllAccumulators",
    ),
    RestRoute(
        "GET",
        f"{_S}/attempts/{{attempt}}/accumulators",
        attempt_accumulators,
        summary="User accumulators of one attempt (none in flott).",
        response_type=SubtaskExecutionAttemptAccumulatorsInfo,
        operation_id="getSubtaskExecutionAttemptAccumulators",
    ),
    RestRoute(
        "GET",
        f"{_V}/jm-operator-metrics",
        jm_operator_metrics,
        summary="Operator-coordinator metrics on the JobManager (flott has no coordinators: empty).",
        response_type=list[Metric],
        operation_id="getJobManagerOperatorMetrics",
        query=(GET_PARAM,),
    ),
]
