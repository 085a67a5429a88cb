"""A job's metrics on the JobManager (Flink's JobManagerJobMetricGroup).

Flink registers them in the job's scope (``<host>.jobmanager.<job_name>``):
the availability figures of the scheduler (``uptime``, ``downtime``,
``numRestarts``, ``fullRestarts``, ``restartingTime``) and the
CheckpointStatsTracker's (``lastCheckpointDuration``, ``lastCheckpointSize``,
``numberOfCompletedCheckpoints`` ...). :func:`job_metric_values` computes
them all from a job's state; the JobManager's job group reads it through
gauges (so the Prometheus reporter and the metric query service see the same
values), and the REST endpoint uses it for jobs that ended.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from flott.runtime.metrics.groups import AbstractMetricGroup
from flott.runtime.metrics.metrics import FunctionGauge
from flott.runtime.metrics.registry import MetricRegistry

if TYPE_CHECKING:
    from flott.runtime.checkpoint.stats import CheckpointStats, CheckpointStatsTracker

_TERMINAL = {"FINISHED", "CANCELED", "FAILED"}

CHECKPOINT_METRICS = (
    "lastCheckpointDuration",
    "lastCheckpointSize",
    "lastCheckpointFullSize",
    "lastCheckpointProcessedData",
    "lastCheckpointPersistedData",
    "lastCheckpointExternalPath",
    "lastCheckpointRestoreTimestamp",
    "lastCompletedCheckpointId",
    "numberOfCompletedCheckpoints",
    "numberOfFailedCheckpoints",
    "numberOfInProgressCheckpoints",
    "totalNumberOfCheckpoints",
)
JOB_METRICS = ("uptime", "downtime", "numRestarts", "fullRestarts", "restartingTime", *CHECKPOINT_METRICS)


def restarting_time(status: str, ts: Mapping[str, int], now: int) -> int:
    """Flink's ``restartingTime``: how long the current restart runs, else how long the last one took."""
    began = ts.get("RESTARTING")
    if began is None:
        return 0
    if status == "RESTARTING":
        return max(0, now - began)
    ended = ts.get("RUNNING", 0)
    return max(0, ended - began) if ended >= began else 0


def _latest_completed(stats: CheckpointStatsTracker) -> CheckpointStats | None:
    candidates = [s for s in (stats.latest_completed, stats.latest_savepoint) if s is not None]
    return max(candidates, key=lambda s: s.checkpoint_id, default=None)


def checkpoint_metric_values(stats: CheckpointStatsTracker | None) -> dict[str, Any]:
    """The CheckpointStatsTracker's job metrics; -1 / ``n/a`` before the first checkpoint (Flink's)."""
    if stats is None:
        latest = None
        completed = failed = in_progress = 0
        restored: Mapping[str, Any] | None = None
    else:
        latest = _latest_completed(stats)
        completed, failed, in_progress = stats.completed, stats.failed, len(stats.in_progress)
        restored = stats.latest_restored
    return {
        "lastCheckpointDuration": latest.end_to_end_duration if latest else -1,
        "lastCheckpointSize": latest.state_size if latest else -1,
        "lastCheckpointFullSize": latest.state_size if latest else -1,
        "lastCheckpointProcessedData": 0 if latest else -1,
        "lastCheckpointPersistedData": 0 if latest else -1,
        "lastCheckpointExternalPath": (latest.external_path or "n/a") if latest else "n/a",
        "lastCheckpointRestoreTimestamp": restored["restore_timestamp"] if restored else -1,
        "lastCompletedCheckpointId": latest.checkpoint_id if latest else -1,
        "numberOfCompletedCheckpoints": completed,
        "numberOfFailedCheckpoints": failed,
        "numberOfInProgressCheckpoints": in_progress,
        "totalNumberOfCheckpoints": completed + failed + in_progress,
    }


def job_metric_values(
    status: str,
    ts: Mapping[str, int],
    now: int,
    num_restarts: int,
    stats: CheckpointStatsTracker | None,
) -> dict[str, Any]:
    """Every job metric, as of ``now`` (ms). Every flott restart is a global failover (all
    subtasks), so ``fullRestarts`` equals ``numRestarts``."""
    if status in _TERMINAL:
        uptime = downtime = -1
    else:
        uptime = now - ts["RUNNING"] if status == "RUNNING" and "RUNNING" in ts else 0
        downtime = now - ts["FAILING"] if status == "FAILING" and "FAILING" in ts else 0
    return {
        "uptime": uptime,
        "downtime": downtime,
        "numRestarts": num_restarts,
        "fullRestarts": num_restarts,
        "restartingTime": restarting_time(status, ts, now),
        **checkpoint_metric_values(stats),
    }


def register_job_metrics(
    registry: MetricRegistry, host: str, job_id: str, job_name: str, values: Callable[[], dict[str, Any]]
) -> AbstractMetricGroup:
    """The job's group on the JobManager; each gauge reads its entry of ``values()``."""
    group = AbstractMetricGroup(
        registry,
        (host, "jobmanager", job_name),
        (),
        {"<host>": host, "<job_id>": job_id, "<job_name>": job_name},
        ("jobmanager", "job"),
    )
    def reader(name: str) -> Callable[[], Any]:
        return lambda: values()[name]

    for name in JOB_METRICS:
        group.metric(name, FunctionGauge(reader(name)))
    registry.job_groups[job_id] = group
    return group


def close_job_metrics(registry: MetricRegistry, job_id: str) -> None:
    group = registry.job_groups.pop(job_id, None)
    if group is not None:
        group.close()
