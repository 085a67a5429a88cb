"""Job, vertex and subtask metrics (Flink: JobMetricsHandler, JobVertexMetricsHandler,
SubtaskMetricsHandler, AggregatingJobsMetricsHandler, AggregatingSubtasksMetricsHandler,
JobVertexWatermarksHandler).

Where the values come from: the endpoint's MetricFetcher
(:mod:`flott.rest.handler.metric_fetcher`), which pulls every process's
metrics at most once per ``metrics.fetcher.update-interval``: a running
subtask's task metrics (``numRecordsIn``, ``numRecordsOutPerSecond`` as
Flink's 60-second meter, ``busyTimeMsPerSecond`` ..., ``currentInputWatermark``)
and its operator metrics (``<operator>.<name>``: user metrics, watermarks)
from the TaskExecutor it runs on, the job's metrics (``uptime``,
``numRestarts``, checkpoint figures) from the JobManager. A subtask that
runs nowhere now (finished, failed, cancelled) shows the counters and user
metrics it reported last (with its terminal state), and no rates. Jobs that
ended show their availability figures as Flink defines them for ended jobs.
"""

from __future__ import annotations

import asyncio

from flott.errors import JobNotFoundError
from flott.rest.errors import RestNotFoundError
from flott.rest.handler.handler import HandlerRequest, QueryParam, RestRoute
from flott.rest.handler.job import views
from flott.rest.handler.metric_fetcher import MetricStore, fetched_metrics
from flott.rest.handler.metrics import (
    AGG_PARAM,
    GET_PARAM,
    SUBTASKS_PARAM,
    aggregated_metrics,
    metric_collection,
    numeric_metrics,
    parse_ranges,
)
from flott.rest.messages.common import AggregatedMetric, Metric
from flott.runtime.messages.archived_execution_graph import (
    ArchivedExecution,
    ArchivedExecutionGraph,
    ArchivedJobVertex,
)
from flott.runtime.metrics.job_metrics import CHECKPOINT_METRICS, job_metric_values


def subtask_metrics(ex: ArchivedExecution, now: int, store: MetricStore | None = None,
                    job_id: str = "", vertex_id: str = "") -> dict[str, float | str]:
    """The subtask's live metrics if its current attempt runs, else what it reported last."""
    if store is not None:
        live = store.subtask(job_id, vertex_id, ex.subtask_index, ex.attempt_number)
        if live is not None:
            return dict(live)
    if not ex.metrics_reported:
        return {}
    m: dict[str, float | str] = {
        "numRecordsIn": ex.records_in,
        "numRecordsOut": ex.records_out,
        "numBuffersIn": ex.buffers_in,
        "numBuffersOut": ex.buffers_out,
        "accumulatedBusyTime": ex.busy_time_ns // 1_000_000,
        "accumulatedBackPressuredTime": ex.back_pressured_time_ns // 1_000_000,
        "accumulatedIdleTime": ex.idle_time_ns // 1_000_000,
    }
    m.update(ex.user_metrics)
    return m





def job_metrics(graph: ArchivedExecutionGraph, store: MetricStore | None = None) -> dict[str, float | str]:
    """The JobManager's job metrics. The availability figures (``uptime``, ``numRestarts`` ...)
    are computed from ``graph``, fetched for this request, so they never lag the job's state
    that other routes show; the checkpoint figures come from the fetched store (an ended job:
    Flink's values for no checkpoint)."""
    values: dict[str, float | str] = dict(store.jobs.get(graph.job_id, {})) if store is not None else {}
    fresh = job_metric_values(graph.status, graph.state_timestamps, graph.now, graph.num_restarts, None)
    if values:
        fresh = {k: v for k, v in fresh.items() if k not in CHECKPOINT_METRICS}
    values.update(fresh)
    return values


async def vertex_of(req: HandlerRequest) -> tuple[ArchivedExecutionGraph, ArchivedJobVertex]:
    """The job's graph and the vertex named in the path; 404 if either is unknown."""
    job_id, vertex_id = req.job_id(), req.vertex_id()
    graph = await (await req.gateway()).request_execution_graph(job_id)
    vertex = views.find_vertex(graph, vertex_id)
    if vertex is None:
        raise RestNotFoundError(f"Job vertex {vertex_id} not found in job {job_id}.")
    return graph, vertex


def subtask_of(req: HandlerRequest, vertex: ArchivedJobVertex) -> ArchivedExecution:
    index = req.int_param("subtaskindex")
    found = next((ex for ex in vertex.subtasks if ex.subtask_index == index), None)
    if found is None:
        raise RestNotFoundError(
            f"Subtask {index} not found in job vertex {vertex.id} (parallelism {vertex.parallelism})."
        )
    return found


async def get_job_metrics(req: HandlerRequest) -> list[Metric]:
    graph = await (await req.gateway()).request_execution_graph(req.job_id())
    return metric_collection(req, job_metrics(graph, await fetched_metrics(req)))


def vertex_metrics(
    graph: ArchivedExecutionGraph, vertex: ArchivedJobVertex, store: MetricStore
) -> dict[int, dict[str, float | str]]:
    """Per subtask index: its metrics (live, or last reported)."""
    return {
        ex.subtask_index: subtask_metrics(ex, graph.now, store, graph.job_id, vertex.id)
        for ex in vertex.subtasks
    }


async def get_vertex_metrics(req: HandlerRequest) -> list[Metric]:
    graph, vertex = await vertex_of(req)
    per_subtask = vertex_metrics(graph, vertex, await fetched_metrics(req))
    available = {
        f"{index}.{name}": value for index, metrics in per_subtask.items() for name, value in metrics.items()
    }
    return metric_collection(req, available)


async def get_vertex_watermarks(req: HandlerRequest) -> list[Metric]:
    """Each running subtask's ``currentInputWatermark`` as ``<subtask>.currentInputWatermark``
    (Flink's JobVertexWatermarksHandler; sources have no input watermark and are not listed)."""
    graph, vertex = await vertex_of(req)
    out = []
    for index, metrics in sorted(vertex_metrics(graph, vertex, await fetched_metrics(req)).items()):
        value = metrics.get("currentInputWatermark")
        if value is not None:
            out.append(Metric(id=f"{index}.currentInputWatermark", value=str(value)))
    return out


async def get_subtask_metrics(req: HandlerRequest) -> list[Metric]:
    graph, vertex = await vertex_of(req)
    store = await fetched_metrics(req)
    return metric_collection(req, subtask_metrics(subtask_of(req, vertex), graph.now, store, graph.job_id,
                                                  vertex.id))


async def get_aggregated_subtask_metrics(req: HandlerRequest) -> list[AggregatedMetric]:
    graph, vertex = await vertex_of(req)
    chosen = parse_ranges(req.query("subtasks"), vertex.parallelism)
    per_subtask = vertex_metrics(graph, vertex, await fetched_metrics(req))
    return aggregated_metrics(
        req,
        [numeric_metrics(m) for i, m in sorted(per_subtask.items()) if chosen is None or i in chosen],
    )


async def get_aggregated_job_metrics(req: HandlerRequest) -> list[AggregatedMetric]:
    gateway = await req.gateway()
    wanted = req.query_list("jobs") or [d.job_id for d in await gateway.request_multiple_job_details()]

    store = await fetched_metrics(req)

    async def one(job_id: str) -> dict[str, float] | None:
        try:
            return numeric_metrics(job_metrics(await gateway.request_execution_graph(job_id), store))
        except JobNotFoundError:
            return None

    graphs = await asyncio.gather(*(one(j) for j in wanted))
    return aggregated_metrics(req, [g for g in graphs if g is not None])


_V = "/jobs/{jobid}/vertices/{vertexid}"

ROUTES = [
    RestRoute(
        "GET",
        "/jobs/metrics",
        get_aggregated_job_metrics,
        summary="Job metrics aggregated over jobs (uptime, downtime, numRestarts ...).",
        response_type=list[AggregatedMetric],
        operation_id="getAggregatedJobMetrics",
        query=(GET_PARAM, AGG_PARAM, QueryParam("jobs", "Comma-separated job ids (default: all).")),
    ),
    RestRoute(
        "GET",
        "/jobs/{jobid}/metrics",
        get_job_metrics,
        summary="Metrics of a job.",
        response_type=list[Metric],
        operation_id="getJobMetrics",
        query=(GET_PARAM,),
    ),
    RestRoute(
        "GET",
        f"{_V}/metrics",
        get_vertex_metrics,
        summary="Task metrics of a vertex, per subtask ('<subtask>.<metric>').",
        response_type=list[Metric],
        operation_id="getJobVertexMetrics",
        query=(GET_PARAM,),
    ),
    RestRoute(
        "GET",
        f"{_V}/watermarks",
        get_vertex_watermarks,
        summary="The current input watermark of each running subtask of a vertex.",
        response_type=list[Metric],
        operation_id="getJobVertexWatermarks",
    ),
    RestRoute(
        "GET",
        f"{_V}/subtasks/metrics",
        get_aggregated_subtask_metrics,
        summary="Task metrics aggregated over a vertex's subtasks.",
        response_type=list[AggregatedMetric],
        operation_id="getAggregatedSubtaskMetrics",
        query=(GET_PARAM, AGG_PARAM, SUBTASKS_PARAM),
    ),
    RestRoute(
        "GET",
        f"{_V}/subtasks/{{subtaskindex}}/metrics",
        get_subtask_metrics,
        summary="Task metrics of one subtask.",
        response_type=list[Metric],
        operation_id="getSubtaskMetrics",
        query=(GET_PARAM,),
    ),
]
