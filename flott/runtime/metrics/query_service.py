"""What a process answers when asked for its metrics (Flink's MetricQueryService and MetricDump).

Flink's query service serialises every metric of the process with its
category (JobManager, TaskManager, job, task, operator) and the REST
endpoint's MetricFetcher files them into its MetricStore. Here one
:class:`MetricDump` per process carries the same categories: the process
scope, the JobManager's job scopes, and one :class:`TaskMetricDump` per
running subtask attempt whose metrics are named as Flink's MetricStore names
them under a subtask (``numRecordsIn``; ``<operator>.<name>`` for operator
metrics). Values are strings, as in Flink's dump.
"""

from __future__ import annotations

import logging

import msgspec

from flott.runtime.metrics.registry import MetricRegistry

log = logging.getLogger(__name__)


class TaskMetricDump(msgspec.Struct, frozen=True):
    job_id: str
    vertex_id: str
    subtask_index: int
    attempt_number: int
    metrics: dict[str, str]


class MetricDump(msgspec.Struct, frozen=True):
    process: dict[str, str] = {}
    """JobManager or TaskManager scope: ``Status.JVM.CPU.Load`` ..."""
    jobs: dict[str, dict[str, str]] = {}
    """JobManager job scope per job id: ``uptime``, ``numberOfCompletedCheckpoints`` ..."""
    tasks: list[TaskMetricDump] = []


def dump_registry(registry: MetricRegistry) -> MetricDump:
    """Every metric of the process, read now (gauges evaluated, rates as of their last update)."""
    now = registry.clock()
    process: dict[str, str] = {}
    if registry.process_group is not None:
        registry.process_group.dump(process, now)
    jobs: dict[str, dict[str, str]] = {}
    for job_id, group in list(registry.job_groups.items()):
        values: dict[str, str] = {}
        group.dump(values, now)
        jobs[job_id] = values
    tasks = [
        TaskMetricDump(g.job_id, g.vertex_id, g.subtask_index, g.attempt_number, g.query_dump())
        for g in registry.task_groups()
    ]
    return MetricDump(process, jobs, tasks)


class ClusterMetricDump(msgspec.Struct, frozen=True):
    """What the REST endpoint's MetricFetcher gets in one call: the JobManager's dump and every
    TaskManager's that answered in time (by resource id)."""

    jobmanager: MetricDump = MetricDump()
    taskmanagers: dict[str, MetricDump] = {}


def vertex_total(dump: ClusterMetricDump, job_id: str, names: dict[str, str]) -> float:
    """The sum, over the running subtasks of the vertices ``names`` maps, of the metric it names
    for each (e.g. each source operator's ``<operator>.numRecordsOutPerSecond``); values that are
    not numbers count as 0."""
    total = 0.0
    for tm in dump.taskmanagers.values():
        for task in tm.tasks:
            name = names.get(task.vertex_id) if task.job_id == job_id else None
            if name is not None:
                try:
                    total += float(task.metrics.get(name, 0))
                except ValueError:
                    continue
    return total
