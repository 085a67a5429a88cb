"""Messages of ``/jobs/:jobid/vertices/:vertexid/...`` (vertex, subtasks, back pressure, accumulators)."""

from __future__ import annotations

from typing import Literal

import msgspec

from flott.rest.messages.base import ResponseBody
from flott.rest.messages.job import IOMetricsInfo


class SubtaskExecutionAttemptDetailsInfo(ResponseBody, frozen=True, kw_only=True):
    """One subtask attempt: ``start-time`` is when it was deployed, ``status-duration`` ms per state."""

    subtask: int
    status: str
    attempt: int
    endpoint: str
    start_time: int = msgspec.field(name="start-time")
    end_time: int = msgspec.field(name="end-time")
    duration: int
    metrics: IOMetricsInfo
    taskmanager_id: str = msgspec.field(name="taskmanager-id")
    status_duration: dict[str, int] = msgspec.field(name="status-duration")
    other_concurrent_attempts: list[SubtaskExecutionAttemptDetailsInfo] = msgspec.field(
        default_factory=list, name="other-concurrent-attempts"
    )


class AggregatedTaskDetailsInfo(ResponseBody, frozen=True, kw_only=True):
    """Per metric (and per state duration): min, max, avg, sum, median, p25, p75, p95 over subtasks."""

    metrics: dict[str, dict[str, int]]
    status_duration: dict[str, dict[str, int]] = msgspec.field(name="status-duration")


class JobVertexDetailsInfo(ResponseBody, frozen=True, kw_only=True):
    """``GET /jobs/:jobid/vertices/:vertexid``."""

    id: str
    name: str
    max_parallelism: int = msgspec.field(name="maxParallelism")
    parallelism: int
    now: int
    subtasks: list[SubtaskExecutionAttemptDetailsInfo]
    aggregated: AggregatedTaskDetailsInfo


BackPressureLevel = Literal["ok", "low", "high"]


class SubtaskBackPressureInfo(ResponseBody, frozen=True, kw_only=True):
    subtask: int
    attempt_number: int = msgspec.field(name="attempt-number")
    backpressure_level: BackPressureLevel = msgspec.field(name="backpressureLevel")
    ratio: float
    idle_ratio: float = msgspec.field(name="idleRatio")
    busy_ratio: float = msgspec.field(name="busyRatio")
    other_concurrent_attempts: list[SubtaskBackPressureInfo] = msgspec.field(
        default_factory=list, name="other-concurrent-attempts"
    )


class JobVertexBackPressureInfo(ResponseBody, frozen=True, kw_only=True):
    """``GET …/backpressure``: ``status`` is ``ok`` once measured, ``deprecated`` before any report."""

    status: Literal["deprecated", "ok"]
    backpressure_level: BackPressureLevel = msgspec.field(name="backpressureLevel")
    end_timestamp: int = msgspec.field(name="end-timestamp")
    subtasks: list[SubtaskBackPressureInfo]


class SubtaskTimeInfo(ResponseBody, frozen=True, kw_only=True):
    subtask: int
    endpoint: str
    duration: int
    timestamps: dict[str, int]


class SubtasksTimesInfo(ResponseBody, frozen=True, kw_only=True):
    """``GET …/subtasktimes``."""

    id: str
    name: str
    now: int
    subtasks: list[SubtaskTimeInfo]


class JobVertexTaskManagerInfo(ResponseBody, frozen=True, kw_only=True):
    endpoint: str
    taskmanager_id: str = msgspec.field(name="taskmanager-id")
    status: str
    start_time: int = msgspec.field(name="start-time")
    end_time: int = msgspec.field(name="end-time")
    duration: int
    metrics: IOMetricsInfo
    status_counts: dict[str, int] = msgspec.field(name="status-counts")
    aggregated: AggregatedTaskDetailsInfo


class JobVertexTaskManagersInfo(ResponseBody, frozen=True, kw_only=True):
    """``GET …/taskmanagers``: the vertex's subtasks grouped by TaskManager."""

    id: str
    name: str
    now: int
    taskmanagers: list[JobVertexTaskManagerInfo]


class UserAccumulator(ResponseBody, frozen=True, kw_only=True):
    name: str
    type: str
    value: str


class JobVertexAccumulatorsInfo(ResponseBody, frozen=True, kw_only=True):
    id: str
    user_accumulators: list[UserAccumulator] = msgspec.field(name="user-accumulators")


class SubtaskAccumulatorsInfo(ResponseBody, frozen=True, kw_only=True):
    subtask: int
    attempt: int
    endpoint: str
    user_accumulators: list[UserAccumulator] = msgspec.field(name="user-accumulators")


class SubtasksAllAccumulatorsInfo(ResponseBody, frozen=True, kw_only=True):
    id: str
    parallelism: int
    subtasks: list[SubtaskAccumulatorsInfo]


class SubtaskExecutionAttemptAccumulatorsInfo(ResponseBody, frozen=True, kw_only=True):
    subtask: int
    attempt: int
    id: str
    user_accumulators: list[UserAccumulator] = msgspec.field(name="user-accumulators")
