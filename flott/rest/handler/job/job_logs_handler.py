"""``GET /jobs/:jobid/logs``: a job's own log, kept after the job ended (flott's, beyond Flink).

The lines are what the job's tasks wrote to stdout/stderr, each tagged with its task, subtask and
attempt, and the job's status changes (:mod:`flott.runtime.jobmaster.job_log`). ``from`` pages
through them (``next`` of one answer is the ``from`` of the next; a negative ``from`` counts from
the end), ``max`` bounds a page (and about a MiB of text does). A follower asks until
``complete``. A job this JobManager has never heard of and whose log it cannot find is a 404.
"""

from __future__ import annotations

from flott.rest.handler.handler import INT64_MAX, HandlerRequest, QueryParam, RestRoute
from flott.rest.messages.job_logs import JobLogLineInfo, JobLogsInfo

DEFAULT_PAGE_LINES = 1000
MAX_PAGE_LINES = 10000


async def job_logs(req: HandlerRequest) -> JobLogsInfo:
    job_id = req.job_id()
    start = req.query_int("from", -INT64_MAX, INT64_MAX)
    max_lines = req.query_int("max", 1, MAX_PAGE_LINES)
    page = await (await req.gateway()).request_job_logs(
        job_id, 0 if start is None else start, DEFAULT_PAGE_LINES if max_lines is None else max_lines
    )
    return JobLogsInfo(
        job_id=page.job_id,
        start=page.start,
        next=page.next,
        lines=[
            JobLogLineInfo(
                index=page.start + i,
                timestamp=line.timestamp,
                kind=line.kind,
                text=line.text,
                task=line.task or None,
                subtask=line.subtask if line.subtask >= 0 else None,
                attempt=line.attempt if line.attempt >= 0 else None,
                status=line.status or None,
            )
            for i, line in enumerate(page.lines)
        ],
        status=page.status,
        complete=page.complete,
        truncated=page.truncated,
    )


ROUTES = [
    RestRoute(
        "GET",
        "/jobs/{jobid}/logs",
        job_logs,
        summary="flott: the job's own log (its tasks' stdout/stderr, tagged, and its status changes), "
        "kept after the job ended and across JobManager failovers.",
        response_type=JobLogsInfo,
        operation_id="getJobLogs",
        query=(
            QueryParam(
                "from",
                "Index of the first line (0 = the first; negative: that many lines before the end).",
                {"type": "integer", "format": "int64", "minimum": -INT64_MAX, "maximum": INT64_MAX},
            ),
            QueryParam(
                "max",
                f"Most lines in the answer (1..{MAX_PAGE_LINES}, default {DEFAULT_PAGE_LINES}).",
                {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_LINES},
            ),
        ),
    ),
]
