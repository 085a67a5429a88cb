"""Flame graphs of a vertex's task threads (Flink's ThreadInfoSampleService and VertexFlameGraph).

A TaskExecutor samples the Python stacks of the threads running the asked
subtasks ``num_samples`` times, ``delay`` apart (``sys._current_frames``, on its
event loop: the task threads are not disturbed). Each sample is classified
as on-CPU or off-CPU by the thread's own CPU clock: a thread that used at
least half of the time since the previous sample was running (Flink uses the
JVM's thread state, RUNNABLE versus WAITING/BLOCKED; Python has no such
state, the CPU clock measures the same thing). The REST endpoint merges the
samples of all subtasks into Flink's tree (``name``, ``value``: samples
through that frame, ``children``) under a root named ``root``.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any

import msgspec


class StackSample(msgspec.Struct, frozen=True, array_like=True):
    frames: list[str]
    """Outermost first: ``module.function:line``."""
    on_cpu: bool


def _frames(frame: Any, max_depth: int) -> list[str]:
    out: list[str] = []
    while frame is not None and len(out) < max_depth:
        code = frame.f_code
        module = frame.f_globals.get("__name__", "?")
        out.append(f"{module}.{getattr(code, 'co_qualname', code.co_name)}:{frame.f_lineno}")
        frame = frame.f_back
    out.reverse()
    return out


def _cpu_ns(thread: threading.Thread) -> int | None:
    try:
        return time.clock_gettime_ns(time.pthread_getcpuclockid(thread.ident or 0))
    except (OSError, AttributeError, OverflowError):
        return None


async def sample_threads(
    threads: list[threading.Thread], num_samples: int, delay_s: float, max_depth: int
) -> list[StackSample]:
    """``num_samples`` stacks of each live thread, ``delay_s`` apart."""
    samples: list[StackSample] = []
    last = {t.ident: (_cpu_ns(t), time.perf_counter_ns()) for t in threads}
    for _ in range(num_samples):
        await asyncio.sleep(delay_s)
        frames = sys._current_frames()
        for t in threads:
            frame = frames.get(t.ident or -1)
            if frame is None:
                continue
            cpu, wall = _cpu_ns(t), time.perf_counter_ns()
            before_cpu, before_wall = last.get(t.ident, (None, wall))
            last[t.ident] = (cpu, wall)
            measured = cpu is not None and before_cpu is not None
            on_cpu = measured and (cpu - before_cpu) * 2 >= wall - before_wall  # type: ignore[operator]
            samples.append(StackSample(_frames(frame, max_depth), on_cpu))
    return samples


class _Node:
    __slots__ = ("children", "name", "value")

    def __init__(self, name: str) -> None:
        self.name = name
        self.value = 0
        self.children: dict[str, _Node] = {}

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value,
                "children": [c.to_json() for c in self.children.values()]}  # fmt: skip


def flame_graph_tree(samples: Iterable[StackSample], kind: str) -> dict[str, Any]:
    """Flink's Node tree of the samples of ``kind`` (FULL, ON_CPU, OFF_CPU)."""
    root = _Node("root")
    for sample in samples:
        if (kind == "ON_CPU" and not sample.on_cpu) or (kind == "OFF_CPU" and sample.on_cpu):
            continue
        node = root
        node.value += 1
        for name in sample.frames:
            child = node.children.get(name)
            if child is None:
                child = node.children[name] = _Node(name)
            child.value += 1
            node = child
    return root.to_json()
