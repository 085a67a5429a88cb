"""A TaskExecutor's capture of what each task writes to stdout and stderr, shipped to its JobMaster.

The process's ``sys.stdout`` and ``sys.stderr`` become tees: everything still goes where it went
(the TaskExecutor's stdout file, ``GET /taskmanagers/:id/stdout``, the console of an embedded
``python job.py``), and what a task's thread writes is also collected, line by line, in that
task's :class:`TaskOutputBuffer` (the thread is bound to it before any user code of the task is
loaded; a thread-local, so threads a user function starts itself are not captured). Every
:data:`SHIP_INTERVAL_S` the :class:`TaskOutputShipper` sends each task's new lines to its
JobMaster (``report_task_output``), and a task's last lines go before its final state is
reported, so a finished job's log holds all of its output
(:mod:`flott.runtime.jobmaster.job_log`).

Bounded: a line longer than :data:`MAX_LINE_CHARS` ships in pieces (the job's log cuts each), a
task keeps at most :data:`MAX_PENDING_BYTES` not yet shipped (more is dropped, its lines counted
and the count shipped), and once the JobMaster answers that the job's log keeps no more task
output, the task stops collecting.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import operator
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

from flott.errors import FlottError
from flott.runtime.messages.execution import TaskDeploymentDescriptor
from flott.runtime.messages.task_output import OutputStream, TaskOutputBatch

log = logging.getLogger(__name__)

SHIP_INTERVAL_S = 0.2
MAX_LINE_CHARS = 16 * 1024
MAX_PENDING_BYTES = 4 * 1024 * 1024

_LOCAL = threading.local()


class TaskOutputBuffer:
    """One task attempt's captured output: appended on its thread, drained on the event loop.

    The task's thread only appends ``(stream, text)`` to :attr:`writes` (in :class:`_Tee`: no
    lock, no call; a print is two writes, the text and the newline); the drain takes what is there
    (``len``, slice, ``del``: each atomic, so a concurrent append is kept for the next drain), joins
    what one stream wrote in a row and keeps its unfinished last line for the next drain. The
    lines travel as runs of text (the JobMaster splits them): no object per line in the task's
    process. A line's timestamp is the drain's, within :data:`SHIP_INTERVAL_S` of its print. The
    bound on what waits is soft (a write racing a drain may be counted late), the count of dropped
    lines approximate.
    """

    def __init__(self, tdd: TaskDeploymentDescriptor) -> None:
        self.execution_id = tdd.execution_id
        self._tag = (tdd.vertex.name, tdd.subtask_index, tdd.vertex.parallelism, tdd.attempt_number)
        self.writes: list[tuple[OutputStream, str]] = []
        self.pending_chars = 0
        self.dropped = 0
        self.enabled = True
        self._partial: dict[OutputStream, str] = {"stdout": "", "stderr": ""}

    def write(self, stream: OutputStream, text: str) -> None:
        """What :class:`_Tee` does inline for the thread bound to this buffer."""
        if self.enabled:
            if self.pending_chars < MAX_PENDING_BYTES:
                self.writes.append((stream, text))
                self.pending_chars += len(text)
            else:
                self.dropped += text.count("\n")

    def _complete(self, stream: OutputStream, text: str) -> str:
        """``text`` after the stream's unfinished line, up to its last newline (the rest waits)."""
        text = self._partial[stream] + text
        cut = text.rfind("\n")
        if cut < 0 and len(text) <= MAX_LINE_CHARS:
            self._partial[stream] = text
            return ""
        if cut < 0 or len(text) - cut - 1 > MAX_LINE_CHARS:  # an endless line ships as it is
            self._partial[stream] = ""
            return text
        self._partial[stream] = text[cut + 1 :]
        return text[:cut]

    def drain(self, final: bool = False) -> TaskOutputBatch | None:
        """The whole lines written since the last drain (``final``: and an unfinished last one)."""
        n = len(self.writes)
        writes = self.writes[:n]
        del self.writes[:n]
        self.pending_chars = 0
        dropped, self.dropped = self.dropped, 0
        now = int(time.time() * 1000)
        runs: list[tuple[int, OutputStream, str]] = []
        streams = set(map(_STREAM, writes))
        grouped = (
            [(writes[0][0], writes)] if len(streams) == 1 else itertools.groupby(writes, key=_STREAM)
        )
        for stream, group in grouped:
            text = self._complete(stream, "".join(map(_TEXT, group)))
            if text:
                runs.append((now, stream, text))
        if final:
            for stream, rest in self._partial.items():
                if rest:
                    runs.append((now, stream, rest))
            self._partial = {"stdout": "", "stderr": ""}
        if not runs and not dropped:
            return None
        name, subtask, parallelism, attempt = self._tag
        return TaskOutputBatch(self.execution_id, name, subtask, parallelism, attempt, runs, dropped)


_STREAM = operator.itemgetter(0)
_TEXT = operator.itemgetter(1)


class _Tee:
    """``sys.stdout``/``sys.stderr`` of a TaskExecutor: writes through, and to the thread's task."""

    def __init__(self, inner: TextIO, stream: OutputStream) -> None:
        self._inner = inner
        self._stream: OutputStream = stream

    def write(self, text: str) -> int:
        buffer: TaskOutputBuffer | None = getattr(_LOCAL, "sink", None)
        if buffer is not None and buffer.enabled:  # TaskOutputBuffer.write, inline (per print)
            if buffer.pending_chars < MAX_PENDING_BYTES:
                buffer.writes.append((self._stream, text))
                buffer.pending_chars += len(text)
            else:
                buffer.dropped += text.count("\n")
        return self._inner.write(text)

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._inner.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


Send = Callable[[TaskOutputBatch], Awaitable[bool]]


class TaskOutputShipper:
    """The TaskExecutor's task buffers and the loop that ships them (see the module docstring)."""

    def __init__(self) -> None:
        self._buffers: dict[str, tuple[TaskOutputBuffer, Send]] = {}
        self._originals: tuple[TextIO, TextIO] | None = None

    def install(self) -> None:
        """Put the tees in place (once per process)."""
        if self._originals is not None or isinstance(sys.stdout, _Tee):
            return
        self._originals = (sys.stdout, sys.stderr)
        sys.stdout = _Tee(sys.stdout, "stdout")  # type: ignore[assignment]
        sys.stderr = _Tee(sys.stderr, "stderr")  # type: ignore[assignment]

    def uninstall(self) -> None:
        if self._originals is not None:
            sys.stdout, sys.stderr = self._originals
            self._originals = None

    def capturing(
        self, tdd: TaskDeploymentDescriptor, send: Send, invokable: Callable[[Any], Any]
    ) -> Callable[[Any], Any]:
        """``invokable`` run with the task's thread bound to a new buffer of its output."""
        buffer = TaskOutputBuffer(tdd)
        self._buffers[tdd.execution_id] = (buffer, send)

        def invoke(env: Any) -> Any:
            _LOCAL.sink = buffer
            return invokable(env)

        return invoke

    async def _ship(self, buffer: TaskOutputBuffer, send: Send, final: bool) -> None:
        batch = buffer.drain(final)
        if batch is None:
            return
        try:
            if not await send(batch):
                buffer.enabled = False  # the job's log is full
        except FlottError as e:
            log.debug("task output of %s not shipped: %s", buffer.execution_id, e)

    async def finish(self, execution_id: str) -> None:
        """The task ended: ship what is left of its output (before its final state)."""
        entry = self._buffers.pop(execution_id, None)
        if entry is not None:
            await self._ship(*entry, final=True)

    async def run(self) -> None:
        while True:
            await asyncio.sleep(SHIP_INTERVAL_S)
            for buffer, send in list(self._buffers.values()):
                with contextlib.suppress(Exception):
                    await self._ship(buffer, send, final=False)


__all__ = ["TaskOutputBuffer", "TaskOutputShipper"]
