"""A JobMaster's failures and earlier attempts as the REST views read them (Flink: the exception
history of ``ExecutionGraphInfo`` and the prior executions of each ``ExecutionVertex``).

The ExecutionGraph records *what* failed (:class:`~flott.runtime.jobmaster.execution_graph.FailureRecord`:
the error, when, which attempt of which subtask); this module adds *where* (the TaskExecutor's
resource id and data address) and *the company it kept* (the other failures of the same job
attempt, Flink's concurrent exceptions) when the Dispatcher snapshots the job for REST.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from flott.runtime.jobgraph import JobGraph
from flott.runtime.jobmaster.execution_graph import Execution, ExecutionGraph
from flott.runtime.messages.archived_execution_graph import ArchivedExecution, ArchivedFailure
from flott.runtime.messages.execution import TaskMetrics


def archived_execution(
    ex: Execution, metrics: Mapping[str, TaskMetrics], endpoints: Mapping[str, str]
) -> ArchivedExecution:
    """One attempt of one subtask with its last reported IO counters."""
    m = metrics.get(ex.execution_id)
    return ArchivedExecution(
        subtask_index=ex.subtask_index,
        attempt_number=ex.attempt_number,
        state=ex.state.name,
        resource_id=ex.resource_id or "",
        endpoint=endpoints.get(ex.resource_id or "", ""),
        state_timestamps=dict(ex.timestamps),
        failure=ex.failure,
        metrics_reported=m is not None,
        records_in=m.records_in if m else 0,
        records_out=m.records_out if m else 0,
        buffers_in=m.buffers_in if m else 0,
        buffers_out=m.buffers_out if m else 0,
        busy_time_ns=m.busy_time_ns if m else 0,
        back_pressured_time_ns=m.back_pressured_time_ns if m else 0,
        idle_time_ns=m.idle_time_ns if m else 0,
        user_metrics=dict(m.user_metrics) if m else {},
    )


def task_name_with_subtask(job_graph: JobGraph, ex: Execution) -> str:
    """Flink's ``getTaskNameWithSubtaskIndex``: ``"<vertex name> (i/n)"``, 1-based."""
    vertex = job_graph.vertex(ex.vertex_id)
    return f"{vertex.name} ({ex.subtask_index + 1}/{vertex.parallelism})"


def _all_executions(graph: ExecutionGraph) -> Iterable[Execution]:
    for kept in graph.prior_attempts.values():
        yield from kept
    yield from graph.executions.values()


def exception_history(
    graph: ExecutionGraph, job_graph: JobGraph, endpoints: Mapping[str, str]
) -> list[ArchivedFailure]:
    """The exception history, newest first; each entry with the other failed subtasks of its attempt."""
    by_id = {ex.execution_id: ex for ex in _all_executions(graph)}
    failed_by_attempt: dict[int, list[Execution]] = {}
    for ex in by_id.values():
        if ex.failure is not None:
            failed_by_attempt.setdefault(ex.attempt_number, []).append(ex)

    def located(ex: Execution) -> ArchivedFailure:
        assert ex.failure is not None
        rid = ex.resource_id or ""
        return ArchivedFailure(
            error=ex.failure,
            timestamp=ex.timestamps.get("FAILED", 0),
            task_name=task_name_with_subtask(job_graph, ex),
            endpoint=endpoints.get(rid, ""),
            resource_id=rid,
        )

    entries: list[ArchivedFailure] = []
    for record in reversed(graph.exception_history):
        root = by_id.get(record.execution_id) if record.execution_id else None
        concurrent = [
            located(ex)
            for ex in sorted(
                failed_by_attempt.get(record.attempt, []),
                key=lambda e: (e.timestamps.get("FAILED", 0), e.vertex_id, e.subtask_index),
            )
            if ex is not root
        ]
        rid = (root.resource_id or "") if root else ""
        entries.append(
            ArchivedFailure(
                error=record.error,
                timestamp=record.timestamp,
                task_name=task_name_with_subtask(job_graph, root) if root else "",
                endpoint=endpoints.get(rid, "") if rid else "",
                resource_id=rid,
                concurrent=concurrent,
            )
        )
    return entries


def prior_attempts(
    graph: ExecutionGraph, vertex_id: str, metrics: Mapping[str, TaskMetrics], endpoints: Mapping[str, str]
) -> list[ArchivedExecution]:
    """The replaced attempts of a vertex's subtasks, by subtask, oldest first."""
    out: list[ArchivedExecution] = []
    for (vid, _), kept in sorted(graph.prior_attempts.items()):
        if vid == vertex_id:
            out.extend(archived_execution(ex, metrics, endpoints) for ex in kept)
    return out
