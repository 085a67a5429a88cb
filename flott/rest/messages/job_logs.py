"""``GET /jobs/:jobid/logs`` (flott's, beyond Flink): a page of a job's own log."""

from __future__ import annotations

import msgspec

from flott.rest.messages.base import ResponseBody


class JobLogLineInfo(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    """One line: a task's output (``stdout``/``stderr``, tagged with the task's name with its
    subtask, the subtask index and the attempt), a status change of the job (``status``, with the
    new status) or the mark where the log stopped keeping task output (``truncated``)."""

    index: int
    timestamp: int
    kind: str
    text: str
    task: str | None = None
    subtask: int | None = None
    attempt: int | None = None
    status: str | None = None


class JobLogsInfo(ResponseBody, frozen=True, kw_only=True):
    """Lines ``from`` .. ``next`` - 1; ask again with ``from=next`` to follow. ``complete``: the
    job is globally terminal and nothing follows ``next``."""

    job_id: str = msgspec.field(name="jid")
    start: int = msgspec.field(name="from")
    next: int
    lines: list[JobLogLineInfo]
    status: str
    complete: bool
    truncated: bool
