"""``/jobs/:jobid/rescales/*``: the rescales a job went through, in Flink 2.3's shapes.

The Dispatcher records each rescale ``PATCH /jobs/:jobid/rescaling`` carries out
(:mod:`flott.runtime.dispatcher.rescale_history`): when it started and ended, how, and each
vertex's parallelism before and after. As in Flink, the history is kept only when
``web.adaptive-scheduler.rescale-history.size`` is above 0; otherwise, and for ``/rescales/config``
always (its fields are the adaptive scheduler's timeouts, and flott rescales on request, with
no such scheduler), the routes answer 404 with Flink's reason.
"""

from __future__ import annotations

import hashlib

from flott.errors import RestNotFoundError
from flott.rest.handler.handler import HandlerRequest, RestRoute
from flott.rest.messages.rescale import (
    JobRescaleDetails,
    JobRescalesOverview,
    JobRescalesSummary,
    LatestRescales,
    RescalesCounts,
    SchedulerStateSpan,
    SlotSharingGroupRescaleInfo,
    StatsSummaryDto,
    VertexParallelismInformation,
    VertexParallelismRescaleInfo,
)
from flott.runtime.checkpoint.stats import stats_summary
from flott.runtime.dispatcher.rescale_history import HISTORY_SIZE_KEY
from flott.runtime.messages.rescale import JobRescales, RescaleRecord


async def _rescales(req: HandlerRequest) -> JobRescales:
    job_id = req.job_id()
    rescales = await (await req.gateway()).request_job_rescales(job_id)  # unknown job: 404
    if rescales.history_size <= 0:
        raise RestNotFoundError(
            f"The job `{job_id}` has no rescale history: the value of configuration option "
            f"`{HISTORY_SIZE_KEY}` has not been set to greater than `0` (flott records the rescales "
            "PATCH /jobs/:jobid/rescaling carries out)."
        )
    return rescales


def _group_id(job_id: str, group: str) -> str:
    """A slot sharing group's id: flott names groups, Flink's API wants 32 hex digits."""
    return hashlib.md5(f"{job_id}|{group}".encode()).hexdigest()


def details(job_id: str, record: RescaleRecord) -> JobRescaleDetails:
    failed = record.terminal_state == "FAILED"
    vertices = {}
    groups: dict[str, list[tuple[int, int]]] = {}
    for v in record.vertices:
        post = v.before if failed else v.after
        groups.setdefault(v.slot_sharing_group, []).append((v.before, post))
        vertices[v.vertex_id] = VertexParallelismRescaleInfo(
            job_vertex_id=v.vertex_id,
            job_vertex_name=v.name,
            slot_sharing_group_id=_group_id(job_id, v.slot_sharing_group),
            slot_sharing_group_name=v.slot_sharing_group,
            desired_parallelism=v.after,
            sufficient_parallelism=v.after,
            pre_rescale_parallelism=v.before,
            post_rescale_parallelism=post,
            required_parallelisms=VertexParallelismInformation(
                min_parallelism=1, parallelism=v.after, max_parallelism=v.max_parallelism
            ),
        )
    slots = {}
    for group, sizes in groups.items():
        pre, post = max(b for b, _ in sizes), max(a for _, a in sizes)
        wanted = max(v.after for v in record.vertices if v.slot_sharing_group == group)
        gid = _group_id(job_id, group)
        slots[gid] = SlotSharingGroupRescaleInfo(
            slot_sharing_group_id=gid,
            slot_sharing_group_name=group,
            desired_slots=wanted,
            minimal_required_slots=wanted,  # flott's scheduler runs a job with all its slots or not
            pre_rescale_slots=pre,
            post_rescale_slots=post,
        )
    return JobRescaleDetails(
        rescale_uuid=record.uuid,
        rescale_attempt_id=record.attempt,
        trigger_cause=record.trigger_cause,
        start_timestamp=record.start_ms,
        end_timestamp=record.end_ms or None,
        terminal_state=record.terminal_state,
        terminated_reason=record.terminated_reason,
        vertices=vertices,
        slots=slots,
        scheduler_states=[
            SchedulerStateSpan(
                state=s.state,
                enter_timestamp=s.enter_ms,
                leave_timestamp=s.leave_ms or None,
                duration=(s.leave_ms - s.enter_ms) if s.leave_ms else None,
                stringified_exception=s.error,
            )
            for s in record.spans
        ],
    )


def _counts(rescales: JobRescales) -> RescalesCounts:
    c = rescales.counts
    return RescalesCounts(
        completed=c.get("COMPLETED", 0),
        failed=c.get("FAILED", 0),
        ignored=c.get("IGNORED", 0),
        in_progress=c.get("IN_PROGRESS", 0),
    )


async def rescale_config(req: HandlerRequest) -> None:
    job_id = req.job_id()
    await (await req.gateway()).request_job_rescales(job_id)  # unknown job: 404
    raise RestNotFoundError(
        f"AdaptiveScheduler is not enabled for this job ({job_id}): flott rescales a job on request "
        f"(PATCH /jobs/{job_id}/rescaling), with no rescale configuration to show."
    )


async def rescales_history(req: HandlerRequest) -> list[JobRescaleDetails]:
    rescales = await _rescales(req)
    return [details(req.job_id(), r) for r in rescales.history]


async def rescales_overview(req: HandlerRequest) -> JobRescalesOverview:
    rescales = await _rescales(req)
    latest = {state.lower(): details(req.job_id(), r) for state, r in rescales.latest.items()}
    return JobRescalesOverview(rescales_counts=_counts(rescales), latest=LatestRescales(**latest))


async def rescales_summary(req: HandlerRequest) -> JobRescalesSummary:
    rescales = await _rescales(req)
    d = rescales.durations_ms

    def stats(values: list[int]) -> StatsSummaryDto:
        return StatsSummaryDto(**stats_summary(values))

    return JobRescalesSummary(
        rescales_counts=_counts(rescales),
        rescales_duration_stats=stats([x for values in d.values() for x in values]),
        completed_duration_stats=stats(d.get("COMPLETED", [])),
        failed_duration_stats=stats(d.get("FAILED", [])),
        ignored_duration_stats=stats(d.get("IGNORED", [])),
    )


async def rescale_details(req: HandlerRequest) -> JobRescaleDetails:
    rescales = await _rescales(req)
    wanted = req.hex_id("rescaleuuid")
    for record in rescales.history:
        if record.uuid == wanted:
            return details(req.job_id(), record)
    raise RestNotFoundError(f"Job {req.job_id()} has no rescale {wanted} in its history.")


_J = "/jobs/{jobid}/rescales"

ROUTES = [
    RestRoute(
        "GET",
        f"{_J}/config",
        rescale_config,
        summary="Flink's adaptive-scheduler rescale configuration: flott has no such scheduler, so this "
        "answers 404 with the reason, as Flink does for a job without it.",
        operation_id="getJobRescaleConfig",
        extra_statuses=(404,),
    ),
    RestRoute(
        "GET",
        f"{_J}/history",
        rescales_history,
        summary="The job's most recent rescales, newest first.",
        response_type=list[JobRescaleDetails],
        operation_id="getJobRescalesHistory",
    ),
    RestRoute(
        "GET",
        f"{_J}/overview",
        rescales_overview,
        summary="The job's rescale counts and its latest rescale of each terminal state.",
        response_type=JobRescalesOverview,
        operation_id="getJobRescalesOverview",
    ),
    RestRoute(
        "GET",
        f"{_J}/summary",
        rescales_summary,
        summary="The job's rescale counts and duration statistics.",
        response_type=JobRescalesSummary,
        operation_id="getJobRescalesSummary",
    ),
    RestRoute(
        "GET",
        f"{_J}/details/{{rescaleuuid}}",
        rescale_details,
        summary="One rescale of the job's history.",
        response_type=JobRescaleDetails,
        operation_id="getJobRescaleDetails",
    ),
]
