"""Messages of ``/jobs/:jobid/rescales/*`` (Flink 2.3's rescale history, FLIP-495/487)."""

from __future__ import annotations

import msgspec

from flott.rest.messages.base import ResponseBody


class VertexParallelismInformation(ResponseBody, frozen=True, kw_only=True):
    min_parallelism: int = msgspec.field(name="minParallelism")
    parallelism: int
    max_parallelism: int = msgspec.field(name="maxParallelism")


class VertexParallelismRescaleInfo(ResponseBody, frozen=True, kw_only=True):
    job_vertex_id: str = msgspec.field(name="jobVertexId")
    job_vertex_name: str = msgspec.field(name="jobVertexName")
    slot_sharing_group_id: str = msgspec.field(name="slotSharingGroupId")
    slot_sharing_group_name: str = msgspec.field(name="slotSharingGroupName")
    desired_parallelism: int = msgspec.field(name="desiredParallelism")
    sufficient_parallelism: int = msgspec.field(name="sufficientParallelism")
    pre_rescale_parallelism: int = msgspec.field(name="preRescaleParallelism")
    post_rescale_parallelism: int = msgspec.field(name="postRescaleParallelism")
    required_parallelisms: VertexParallelismInformation = msgspec.field(name="requiredParallelisms")


class SlotSharingGroupRescaleInfo(ResponseBody, frozen=True, kw_only=True):
    slot_sharing_group_id: str = msgspec.field(name="slotSharingGroupId")
    slot_sharing_group_name: str = msgspec.field(name="slotSharingGroupName")
    desired_slots: int = msgspec.field(name="desiredSlots")
    minimal_required_slots: int = msgspec.field(name="minimalRequiredSlots")
    pre_rescale_slots: int = msgspec.field(name="preRescaleSlots")
    post_rescale_slots: int = msgspec.field(name="postRescaleSlots")


class SchedulerStateSpan(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    state: str
    enter_timestamp: int = msgspec.field(name="enterTimestampInMillis")
    leave_timestamp: int | None = msgspec.field(default=None, name="leaveTimestampInMillis")
    duration: int | None = msgspec.field(default=None, name="durationInMillis")
    stringified_exception: str | None = msgspec.field(default=None, name="stringifiedException")


class JobRescaleDetails(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    rescale_uuid: str = msgspec.field(name="rescaleUuid")
    rescale_attempt_id: int = msgspec.field(name="rescaleAttemptId")
    trigger_cause: str = msgspec.field(name="triggerCause")
    start_timestamp: int = msgspec.field(name="startTimestampInMillis")
    end_timestamp: int | None = msgspec.field(default=None, name="endTimestampInMillis")
    terminal_state: str | None = msgspec.field(default=None, name="terminalState")
    terminated_reason: str | None = msgspec.field(default=None, name="terminatedReason")
    vertices: dict[str, VertexParallelismRescaleInfo]
    slots: dict[str, SlotSharingGroupRescaleInfo]
    scheduler_states: list[SchedulerStateSpan] = msgspec.field(name="schedulerStates")


class RescalesCounts(ResponseBody, frozen=True, kw_only=True):
    completed: int
    failed: int
    ignored: int
    in_progress: int = msgspec.field(name="inProgress")


class LatestRescales(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    completed: JobRescaleDetails | None = None
    failed: JobRescaleDetails | None = None
    ignored: JobRescaleDetails | None = None


class JobRescalesOverview(ResponseBody, frozen=True, kw_only=True):
    rescales_counts: RescalesCounts = msgspec.field(name="rescalesCounts")
    latest: LatestRescales


class StatsSummaryDto(ResponseBody, frozen=True, kw_only=True):
    min: int
    max: int
    avg: int
    p50: float
    p90: float
    p95: float
    p99: float
    p999: float


class JobRescalesSummary(ResponseBody, frozen=True, kw_only=True):
    rescales_counts: RescalesCounts = msgspec.field(name="rescalesCounts")
    rescales_duration_stats: StatsSummaryDto = msgspec.field(name="rescalesDurationStatsInMillis")
    completed_duration_stats: StatsSummaryDto = msgspec.field(name="completedRescalesDurationStatsInMillis")
    failed_duration_stats: StatsSummaryDto = msgspec.field(name="failedRescalesDurationStatsInMillis")
    ignored_duration_stats: StatsSummaryDto = msgspec.field(name="ignoredRescalesDurationStatsInMillis")
