"""Flink's job, vertex and subtask views, derived from the Dispatcher's ArchivedExecutionGraph.

Flink's handlers each compute their view from the archived execution graph;
the shared arithmetic (timestamps → start/end/duration, state counts,
aggregated IO metrics, the plan) lives here so every endpoint agrees.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence

from flott.common.job_status import JobStatus
from flott.rest.messages.job import (
    IOMetricsInfo,
    JobDetailsInfo,
    JobDetailsVertexInfo,
    Plan,
    PlanInput,
    PlanNode,
)
from flott.rest.messages.vertex import AggregatedTaskDetailsInfo, SubtaskExecutionAttemptDetailsInfo
from flott.runtime.jobgraph import JobGraph
from flott.runtime.messages.archived_execution_graph import (
    ArchivedExecution,
    ArchivedExecutionGraph,
    ArchivedJobVertex,
)
from flott.runtime.messages.execution import ExecutionState

EXECUTION_STATES: list[str] = [s.name for s in ExecutionState]
JOB_STATUSES: list[str] = [s.name for s in JobStatus]
_TERMINAL_EXECUTION = {"FINISHED", "CANCELED", "FAILED"}
_TERMINAL_JOB = {"FINISHED", "CANCELED", "FAILED"}
# The states a subtask spends time in, in order (Flink's status-duration keys).
_DURATION_STATES = ["CREATED", "SCHEDULED", "DEPLOYING", "INITIALIZING", "RUNNING"]


def find_vertex(graph: ArchivedExecutionGraph, vertex_id: str) -> ArchivedJobVertex | None:
    return next((v for v in graph.vertices if v.id == vertex_id), None)


# -- times --------------------------------------------------------------------------------------


def subtask_times(ex: ArchivedExecution, now: int) -> tuple[int, int, int]:
    """(start, end, duration) as Flink reports a subtask: start = deployment, end only when terminal."""
    start = ex.state_timestamps.get("DEPLOYING", -1)
    end = ex.state_timestamps.get(ex.state, -1) if ex.state in _TERMINAL_EXECUTION else -1
    duration = ((end if end > 0 else now) - start) if start > 0 else -1
    return start, end, duration


def vertex_times(subtasks: Sequence[ArchivedExecution], now: int) -> tuple[int, int, int]:
    starts = [s for s in (subtask_times(ex, now)[0] for ex in subtasks) if s > 0]
    start = min(starts) if starts else -1
    ends = [subtask_times(ex, now)[1] for ex in subtasks]
    end = max(ends) if subtasks and all(e > 0 for e in ends) else -1
    duration = ((end if end > 0 else now) - start) if start > 0 else -1
    return start, end, duration


def job_times(graph: ArchivedExecutionGraph) -> tuple[int, int, int]:
    ts = graph.state_timestamps
    start = ts.get("INITIALIZING", ts.get("CREATED", graph.now))
    end = ts.get(graph.status, graph.now) if graph.status in _TERMINAL_JOB else -1
    return start, end, (end if end > 0 else graph.now) - start


def status_duration(ex: ArchivedExecution, now: int) -> dict[str, int]:
    """Milliseconds spent in each pre-terminal state (0 for states never entered)."""
    ts = ex.state_timestamps
    reached = sorted((t, s) for s, t in ts.items())
    out = dict.fromkeys(_DURATION_STATES, 0)
    for i, (t, state) in enumerate(reached):
        if state not in out:
            continue
        nxt = reached[i + 1][0] if i + 1 < len(reached) else now
        out[state] = max(0, nxt - t)
    return out


# -- states -------------------------------------------------------------------------------------


def state_counts(states: Iterable[str]) -> dict[str, int]:
    counts = dict.fromkeys(EXECUTION_STATES, 0)
    for s in states:
        counts[s] = counts.get(s, 0) + 1
    return counts


def aggregate_state(states: Sequence[str]) -> str:
    """A vertex's state from its subtasks' (Flink's rule: failures and activity win, FINISHED needs all)."""
    if not states:
        return "CREATED"
    if all(s == states[0] for s in states):
        return states[0]
    for s in ("FAILED", "CANCELING", "CANCELED", "RUNNING", "INITIALIZING", "DEPLOYING", "SCHEDULED"):
        if s in states:
            return s
    return "CREATED"


# -- metrics ------------------------------------------------------------------------------------


def io_metrics(subtasks: Sequence[ArchivedExecution]) -> IOMetricsInfo:
    complete = bool(subtasks) and all(ex.metrics_reported for ex in subtasks)
    return IOMetricsInfo(
        read_records=sum(ex.records_in for ex in subtasks),
        read_records_complete=complete,
        write_records=sum(ex.records_out for ex in subtasks),
        write_records_complete=complete,
        accumulated_backpressured_time=sum(ex.back_pressured_time_ns for ex in subtasks) // 1_000_000,
        accumulated_idle_time=sum(ex.idle_time_ns for ex in subtasks) // 1_000_000,
        accumulated_busy_time=sum(ex.busy_time_ns for ex in subtasks) / 1_000_000,
    )


def _stats(values: Sequence[int]) -> dict[str, int]:
    if not values:
        return dict.fromkeys(("min", "max", "avg", "sum", "median", "p25", "p75", "p95"), 0)
    ordered = sorted(values)

    def pct(p: float) -> int:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    return {
        "min": ordered[0],
        "max": ordered[-1],
        "avg": int(statistics.fmean(ordered)),
        "sum": sum(ordered),
        "median": int(statistics.median(ordered)),
        "p25": pct(0.25),
        "p75": pct(0.75),
        "p95": pct(0.95),
    }


def aggregated_details(subtasks: Sequence[ArchivedExecution], now: int) -> AggregatedTaskDetailsInfo:
    per = [io_metrics([ex]) for ex in subtasks]
    metrics = {
        "read-bytes": _stats([m.read_bytes for m in per]),
        "write-bytes": _stats([m.write_bytes for m in per]),
        "read-records": _stats([m.read_records for m in per]),
        "write-records": _stats([m.write_records for m in per]),
        "accumulated-backpressured-time": _stats([m.accumulated_backpressured_time for m in per]),
        "accumulated-idle-time": _stats([m.accumulated_idle_time for m in per]),
        "accumulated-busy-time": _stats([int(m.accumulated_busy_time) for m in per]),
    }
    durations = [status_duration(ex, now) for ex in subtasks]
    return AggregatedTaskDetailsInfo(
        metrics=metrics,
        status_duration={s: _stats([d[s] for d in durations]) for s in _DURATION_STATES},
    )


def subtask_details(ex: ArchivedExecution, now: int) -> SubtaskExecutionAttemptDetailsInfo:
    start, end, duration = subtask_times(ex, now)
    return SubtaskExecutionAttemptDetailsInfo(
        subtask=ex.subtask_index,
        status=ex.state,
        attempt=ex.attempt_number,
        endpoint=ex.endpoint or "(unassigned)",
        start_time=start,
        end_time=end,
        duration=duration,
        metrics=io_metrics([ex]),
        taskmanager_id=ex.resource_id or "(unassigned)",
        status_duration=status_duration(ex, now),
    )


# -- plan and details ---------------------------------------------------------------------------

SHIP_STRATEGY = {
    "forward": "FORWARD",
    "hash": "HASH",
    "rebalance": "REBALANCE",
    "rescale": "RESCALE",
    "shuffle": "SHUFFLE",
    "broadcast": "BROADCAST",
    "global": "GLOBAL",
    "custom": "CUSTOM",
}


def plan(graph: ArchivedExecutionGraph) -> Plan:
    """Flink's JSON plan: one node per vertex, inputs naming the producer and the ship strategy."""
    nodes = []
    for v in graph.vertices:
        inputs = [
            PlanInput(
                num=i, id=e.source, ship_strategy=SHIP_STRATEGY.get(e.partitioner, e.partitioner.upper())
            )
            for i, e in enumerate(
                sorted((e for e in graph.edges if e.target == v.id), key=lambda e: e.target_input)
            )
        ]
        nodes.append(
            PlanNode(
                id=v.id,
                parallelism=v.parallelism,
                operator="",
                operator_strategy="",
                description=" -> ".join(v.operator_names) or v.name,
                inputs=inputs,
            )
        )
    return Plan(
        jid=graph.job_id,
        name=graph.job_name,
        type="BATCH" if graph.job_type == "BATCH" else "STREAMING",
        nodes=nodes,
    )


def job_graph_plan(graph: JobGraph) -> Plan:
    """Flink's JSON plan of a JobGraph not yet submitted (what ``GET /jobs/:id/plan`` shows once it is)."""
    nodes = []
    for v in graph.topological_order():
        inputs = [
            PlanInput(
                num=i,
                id=e.source,
                ship_strategy=SHIP_STRATEGY.get(e.partitioner.kind, e.partitioner.kind.upper()),
            )
            for i, e in enumerate(sorted(graph.inputs_of(v.id), key=lambda e: e.target_input))
        ]
        nodes.append(
            PlanNode(
                id=v.id,
                parallelism=v.parallelism,
                description=" -> ".join(op.name for op in v.operators) or v.name,
                inputs=inputs,
            )
        )
    mode = graph.config.get("execution.runtime-mode", "STREAMING").strip().upper()
    return Plan(
        jid=graph.job_id, name=graph.job_name, type="BATCH" if mode == "BATCH" else "STREAMING", nodes=nodes
    )


def job_details_info(graph: ArchivedExecutionGraph) -> JobDetailsInfo:
    start, end, duration = job_times(graph)
    vertices = []
    for v in graph.vertices:
        v_start, v_end, v_duration = vertex_times(v.subtasks, graph.now)
        vertices.append(
            JobDetailsVertexInfo(
                id=v.id,
                name=v.name,
                max_parallelism=v.max_parallelism,
                parallelism=v.parallelism,
                status=aggregate_state([ex.state for ex in v.subtasks]),
                start_time=v_start,
                end_time=v_end,
                duration=v_duration,
                tasks=state_counts(ex.state for ex in v.subtasks),
                metrics=io_metrics(v.subtasks),
            )
        )
    return JobDetailsInfo(
        jid=graph.job_id,
        name=graph.job_name,
        state=graph.status,
        job_type="BATCH" if graph.job_type == "BATCH" else "STREAMING",
        start_time=start,
        end_time=end,
        duration=duration,
        max_parallelism=graph.max_parallelism,
        now=graph.now,
        timestamps={s: graph.state_timestamps.get(s, 0) for s in JOB_STATUSES},
        vertices=vertices,
        status_counts=state_counts(v.status for v in vertices),
        plan=plan(graph),
    )
