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

Bounded: a line is cut at :data:`MAX_LINE_CHARS`, a task keeps at most
:data:`MAX_PENDING_BYTES` not yet shipped (more is counted as dropped, and the count shipped),
and once the JobMaster answers that the job's log keeps no more task output, the task stops
collecting.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
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
    """One task attempt's captured lines (written on its thread, drained on the event loop)."""

    def __init__(self, tdd: TaskDeploymentDescriptor) -> None:
        self.execution_id = tdd.execution_id
        self._tag = (tdd.vertex.name, tdd.subtask_index, tdd.vertex.parallelism, tdd.attempt_number)
        self._lock = threading.Lock()
        self._lines: list[tuple[int, OutputStream, str]] = []
        self._partial: dict[OutputStream, str] = {"stdout": "", "stderr": ""}
        self._pending_bytes = 0
        self._dropped = 0
        self.enabled = True

    def write(self, stream: OutputStream, text: str) -> None:
        if not self.enabled or not text:
            return
        with self._lock:
            parts = (self._partial[stream] + text).split("\n")
            self._partial[stream] = parts.pop()
            if len(self._partial[stream]) > MAX_LINE_CHARS:
                parts.append(self._partial[stream])
                self._partial[stream] = ""
            now = int(time.time() * 1000)
            for line in parts:
                self._add(now, stream, line)

    def _add(self, now: int, stream: OutputStream, line: str) -> None:
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " [... line cut]"
        if self._pending_bytes + len(line) > MAX_PENDING_BYTES:
            self._dropped += 1
            return
        self._lines.append((now, stream, line.rstrip("\r")))
        self._pending_bytes += len(line)

    def drain(self, final: bool = False) -> TaskOutputBatch | None:
        """The lines collected since the last drain (``final``: with an unfinished last line)."""
        with self._lock:
            if final:
                now = int(time.time() * 1000)
                for stream, rest in self._partial.items():
                    if rest:
                        self._add(now, stream, rest)
                self._partial = {"stdout": "", "stderr": ""}
            if not self._lines and not self._dropped:
                return None
            lines, dropped = self._lines, self._dropped
            self._lines, self._dropped, self._pending_bytes = [], 0, 0
        name, subtask, parallelism, attempt = self._tag
        return TaskOutputBatch(self.execution_id, name, subtask, parallelism, attempt, lines, dropped)


class _Tee:
    """``sys.stdout``/``sys.stderr`` of a TaskExecutor: writes through, and to the thread's task."""

    def __init__(self, inner: TextIO, stream: OutputStream) -> None:
        self._inner = inner
        self._stream: OutputStream = stream

    def write(self, text: str) -> int:
        n = self._inner.write(text)
        sink: TaskOutputBuffer | None = getattr(_LOCAL, "sink", None)
        if sink is not None:
            sink.write(self._stream, text)
        return n

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
