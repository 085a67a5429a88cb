"""Job, vertex and subtask metrics (Flink: JobMetricsHandler, JobVertexMetricsHandler,
SubtaskMetricsHandler, AggregatingJobsMetricsHandler, AggregatingSubtasksMetricsHandler).

Where the values come from: each subtask's IO counters arrive with the
TaskExecutor's heartbeat to the JobMaster (records in/out, buffers in/out,
busy / back-pressured / idle nanoseconds), and so do its user metrics
(``<operator>.<groups>.<name>`` as Flink's query scope names them; a
finished task's final values come with its terminal state). The
``*PerSecond`` metrics are **averages over the subtask's running time**, not
Flink's one-minute rates. Job metrics are derived from
the job's state timestamps and its restart count (``numRestarts``, ``fullRestarts``: every
flott restart is a full one).
"""

from __future__ import annotations

import asyncio

from flott.errors import JobNotFoundError
from flott.rest.errors import RestNotFoundError
from flott.rest.handler.handler import HandlerRequest, QueryParam, RestRoute
from flott.rest.handler.job import views
from flott.rest.handler.metrics import (
    AGG_PARAM,
    GET_PARAM,
    SUBTASKS_PARAM,
    aggregated_metrics,
    metric_collection,
    parse_ranges,
)
from flott.rest.messages.common import AggregatedMetric, Metric
from flott.runtime.messages.archived_execution_graph import (
    ArchivedExecution,
    ArchivedExecutionGraph,
    ArchivedJobVertex,
)

_TERMINAL = {"FINISHED", "CANCELED", "FAILED"}


def subtask_metrics(ex: ArchivedExecution, now: int) -> dict[str, float | str]:
    if not ex.metrics_reported:
        return {}
    m: dict[str, float | str] = {
        "numRecordsIn": ex.records_in,
        "numRecordsOut": ex.records_out,
        "numBuffersIn": ex.buffers_in,
        "numBuffersOut": ex.buffers_out,
        "accumulatedBusyTime": ex.busy_time_ns / 1e6,
        "accumulatedBackPressuredTime": ex.back_pressured_time_ns / 1e6,
        "accumulatedIdleTime": ex.idle_time_ns / 1e6,
    }
    since = ex.state_timestamps.get("RUNNING") or ex.state_timestamps.get("DEPLOYING")
    if since:
        until = ex.state_timestamps.get(ex.state, now) if ex.state in _TERMINAL else now
        seconds = max(0.001, (until - since) / 1000.0)
        m.update(
            {
                "numRecordsInPerSecond": ex.records_in / seconds,
                "numRecordsOutPerSecond": ex.records_out / seconds,
                "busyTimeMsPerSecond": min(1000.0, ex.busy_time_ns / 1e6 / seconds),
                "backPressuredTimeMsPerSecond": min(1000.0, ex.back_pressured_time_ns / 1e6 / seconds),
                "idleTimeMsPerSecond": min(1000.0, ex.idle_time_ns / 1e6 / seconds),
            }
        )
    m.update(ex.user_metrics)
    return m


def numeric_metrics(metrics: dict[str, float | str]) -> dict[str, float]:
    """The metrics an aggregation can combine: numbers, and strings that parse as one (Flink skips
    the others, e.g. a distribution's or a string gauge's text)."""
    out: dict[str, float] = {}
    for name, value in metrics.items():
        if isinstance(value, str):
            try:
                out[name] = float(value)
            except ValueError:
                continue
        else:
            out[name] = value
    return out


def job_metrics(graph: ArchivedExecutionGraph) -> dict[str, float]:
    ts = graph.state_timestamps
    if graph.status in _TERMINAL:
        uptime = downtime = -1.0
    else:
        uptime = float(graph.now - ts["RUNNING"]) if graph.status == "RUNNING" and "RUNNING" in ts else 0.0
        downtime = float(graph.now - ts["FAILING"]) if graph.status == "FAILING" and "FAILING" in ts else 0.0
    # Every flott restart is a global failover (all subtasks), so fullRestarts == numRestarts.
    restarts = graph.num_restarts
    return {
        "uptime": uptime,
        "downtime": downtime,
        "numRestarts": restarts,
        "fullRestarts": restarts,
        "restartingTime": restarting_time(graph),
    }


def restarting_time(graph: ArchivedExecutionGraph) -> int:
    """Flink's ``restartingTime``: how long the current restart runs, else how long the last one took."""
    ts = graph.state_timestamps
    began = ts.get("RESTARTING")
    if began is None:
        return 0
    if graph.status == "RESTARTING":
        return max(0, graph.now - began)
    ended = ts.get("RUNNING", 0)
    return max(0, ended - began) if ended >= began else 0


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
    return metric_collection(req, job_metrics(graph))


async def get_vertex_metrics(req: HandlerRequest) -> list[Metric]:
    graph, vertex = await vertex_of(req)
    available = {
        f"{ex.subtask_index}.{name}": value
        for ex in vertex.subtasks
        for name, value in subtask_metrics(ex, graph.now).items()
    }
    return metric_collection(req, available)


async def get_subtask_metrics(req: HandlerRequest) -> list[Metric]:
    graph, vertex = await vertex_of(req)
    return metric_collection(req, subtask_metrics(subtask_of(req, vertex), graph.now))


async def get_aggregated_subtask_metrics(req: HandlerRequest) -> list[AggregatedMetric]:
    graph, vertex = await vertex_of(req)
    chosen = parse_ranges(req.query("subtasks"), vertex.parallelism)
    return aggregated_metrics(
        req,
        [
            numeric_metrics(subtask_metrics(ex, graph.now))
            for ex in vertex.subtasks
            if chosen is None or ex.subtask_index in chosen
        ],
    )


async def get_aggregated_job_metrics(req: HandlerRequest) -> list[AggregatedMetric]:
    gateway = await req.gateway()
    wanted = req.query_list("jobs") or [d.job_id for d in await gateway.request_multiple_job_details()]

    async def one(job_id: str) -> dict[str, float] | None:
        try:
            return job_metrics(await gateway.request_execution_graph(job_id))
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
