"""What a job's log is made of: its tasks' captured output and its own status changes.

A TaskExecutor captures what each task writes to ``sys.stdout``/``sys.stderr`` (a ``print`` in a
user function, the print sink) and ships it to the task's JobMaster in
:class:`TaskOutputBatch` es; the JobMaster appends them, with the job's status changes, to the
job's log (:mod:`flott.runtime.jobmaster.job_log`), which outlives the TaskExecutors and the
JobManager. ``GET /jobs/:jobid/logs`` answers :class:`JobLogPage` s of :class:`JobLogLine` s.
"""

from __future__ import annotations

from typing import Literal

import msgspec

OutputStream = Literal["stdout", "stderr"]


class TaskOutputBatch(msgspec.Struct, frozen=True):
    """What one task attempt wrote, oldest first, as ``(epoch ms, stream, text)`` runs: ``text`` is
    one or more whole lines of that stream, joined by ``\n`` (the receiver splits them: a
    TaskExecutor moves a task's output in a few strings, not one object per line)."""

    execution_id: str
    vertex_name: str
    subtask_index: int
    parallelism: int
    attempt: int
    runs: list[tuple[int, OutputStream, str]]
    dropped: int = 0
    """Lines this task wrote that the TaskExecutor could not keep (its buffer was full)."""


LineKind = Literal["stdout", "stderr", "status", "truncated"]


class JobLogLine(msgspec.Struct, frozen=True, omit_defaults=True):
    """One line of a job's log. ``status`` lines are the job's status changes (``status`` is the
    new one, ``text`` says what and why); ``truncated`` marks where the log stopped keeping task
    output (``flott.job-logs.max-bytes``)."""

    timestamp: int
    kind: LineKind
    text: str
    task: str = ""
    """The task's name with its subtask, as Flink names it: ``Map -> Sink (2/4)``."""
    subtask: int = -1
    attempt: int = -1
    status: str = ""


class JobLogPage(msgspec.Struct, frozen=True):
    """Lines ``start`` .. ``next`` - 1 of a job's log.

    ``complete``: the job is globally terminal (or no longer known) and ``next`` is the end of
    its log: nothing more will come (a follower stops here). ``status`` is the job's status as far
    as this JobManager knows (the log's final status if the job itself is no longer known here).
    ``truncated``: the page holds the line where the log stopped keeping task output.
    """

    job_id: str
    start: int
    next: int
    lines: list[JobLogLine]
    status: str
    complete: bool
    truncated: bool = False


__all__ = ["JobLogLine", "JobLogPage", "LineKind", "OutputStream", "TaskOutputBatch"]
