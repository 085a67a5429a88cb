"""The stacks of this process's Python threads (Flink: a JVM thread dump), for
``/jobmanager/thread-dump`` and, over RPC from the TaskExecutor, ``/taskmanagers/:id/thread-dump``.

Each thread is described as Java's ``ThreadInfo.toString`` starts, ``"name" Id=<ident> RUNNABLE``
(``daemon`` added for daemon threads), followed by its Python stack, innermost call last.
"""

from __future__ import annotations

import sys
import threading
import traceback

import msgspec


class ThreadStack(msgspec.Struct, frozen=True):
    name: str
    text: str


def thread_stacks() -> list[ThreadStack]:
    frames = sys._current_frames()
    out = []
    for t in threading.enumerate():
        frame = frames.get(t.ident or -1)
        stack = "".join(traceback.format_stack(frame)) if frame is not None else ""
        state = "RUNNABLE" if t.is_alive() else "TERMINATED"
        out.append(
            ThreadStack(t.name, f'"{t.name}" Id={t.ident} {state}{" daemon" if t.daemon else ""}\n{stack}')
        )
    return out
