"""``/jobs/:jobid/jobmanager/log-url`` and ``/jobs/:jobid/taskmanagers/:taskmanagerid/log-url``.

Where an external log service keeps a job's logs, built as Flink's HistoryServer builds it:
from ``historyserver.log.jobmanager.url-pattern`` / ``historyserver.log.taskmanager.url-pattern``
with ``<jobid>`` (and ``<tmid>``) replaced; a pattern without a scheme gets ``http://``, one
with a scheme other than http or https is not used. Flink registers each route only when its
pattern is usable, so without one these answer 404 (saying which key to set).
"""

from __future__ import annotations

from flott.errors import RestNotFoundError
from flott.rest.handler.handler import HandlerRequest, RestRoute
from flott.rest.messages.log_url import LogUrlResponse

JOBMANAGER_PATTERN_KEY = "historyserver.log.jobmanager.url-pattern"
TASKMANAGER_PATTERN_KEY = "historyserver.log.taskmanager.url-pattern"


def log_url_pattern(value: str | None) -> str | None:
    """The usable form of a configured pattern (Flink's LogUrlUtil), None if there is none."""
    pattern = (value or "").strip()
    if not pattern:
        return None
    scheme = pattern[: max(pattern.find("://"), 0)]
    if not scheme:
        return f"http://{pattern}"
    return pattern if scheme.lower() in ("http", "https") else None


def _pattern(req: HandlerRequest, key: str) -> str:
    configured = req.config.get(key, "")
    pattern = log_url_pattern(configured)
    if pattern is None:
        why = "is not set" if not configured.strip() else "has a scheme other than http or https"
        raise RestNotFoundError(f"No log URL for this job: {key} {why}.")
    return pattern


async def jobmanager_log_url(req: HandlerRequest) -> LogUrlResponse:
    pattern = _pattern(req, JOBMANAGER_PATTERN_KEY)
    return LogUrlResponse(url=pattern.replace("<jobid>", req.job_id()))


async def taskmanager_log_url(req: HandlerRequest) -> LogUrlResponse:
    pattern = _pattern(req, TASKMANAGER_PATTERN_KEY)
    url = pattern.replace("<jobid>", req.job_id()).replace("<tmid>", req.hex_id("taskmanagerid"))
    return LogUrlResponse(url=url)


ROUTES = [
    RestRoute(
        "GET",
        "/jobs/{jobid}/jobmanager/log-url",
        jobmanager_log_url,
        summary=f"The JobManager's log URL for the job, from {JOBMANAGER_PATTERN_KEY} (404 without it).",
        response_type=LogUrlResponse,
        operation_id="getJobManagerLogUrl",
    ),
    RestRoute(
        "GET",
        "/jobs/{jobid}/taskmanagers/{taskmanagerid}/log-url",
        taskmanager_log_url,
        summary=f"A TaskManager's log URL for the job, from {TASKMANAGER_PATTERN_KEY} (404 without it).",
        response_type=LogUrlResponse,
        operation_id="getTaskManagerLogUrl",
    ),
]
