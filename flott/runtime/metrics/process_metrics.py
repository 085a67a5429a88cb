"""A process's own metrics under Flink's ``Status.JVM.*`` names, mapped to a Python process.

Flink reports the JVM of each JobManager and TaskManager; flott's processes
are Python interpreters, so each name means the nearest Python figure:

======================================================  ===========================================
Flink name                                              flott value
======================================================  ===========================================
``Status.JVM.CPU.Load``                                 the process's CPU time over the last update
                                                        interval / (wall time * cores), 0..1
                                                        (Flink: ProcessCpuLoad, a share of the host)
``Status.JVM.CPU.Time``                                 user + system CPU time of the process, ns
``Status.JVM.Memory.Heap.Used``/``.Committed``          the resident set size (RSS): Python has no
                                                        separate heap, its objects live in the RSS
``Status.JVM.Memory.Heap.Max``                          the host's physical memory (no -Xmx bound)
``Status.JVM.Threads.Count``                            the process's OS threads
``Status.JVM.GarbageCollector.gen<N>.Count``            collections of generation N by Python's
                                                        cyclic collector (``gc.get_stats``)
``Status.JVM.GarbageCollector.gen<N>.Time``             milliseconds spent in those collections
                                                        (timed by a ``gc.callbacks`` hook: two clock
                                                        reads per collection, and a TaskExecutor
                                                        collects rarely, see ``tune_garbage_collector``)
``Status.JVM.ClassLoader.ClassesLoaded``                modules imported (``sys.modules``)
``Status.Process.CPU.Time``, ``.Memory.RSS``/``.VMS``,  flott's own names for the same process-table
``.Threads.Count``                                      figures (what earlier versions served)
``Status.Python.GC.gen<N>.Count``/``.Time``             flott's own names for the collector figures
                                                        above (count; milliseconds), and
``Status.Python.GC.gen<N>.Collected``                   the objects those collections freed
======================================================  ===========================================

Generation 0 is the youngest; CPython has three (``gen0``..``gen2``). All counts and times are
totals since the process started, so they never decrease.
"""

from __future__ import annotations

import functools
import gc
import os
import sys
import time

import psutil

from flott.runtime.metrics.groups import AbstractMetricGroup
from flott.runtime.metrics.metrics import FunctionGauge, View
from flott.runtime.metrics.registry import MetricRegistry


class _ProcessSampler(View):
    """Reads the process table once per update (CPU load needs two samples; RSS is cheap to cache)."""

    def __init__(self, now: float) -> None:
        self._proc = psutil.Process()
        self._cores = os.cpu_count() or 1
        self._total_memory = psutil.virtual_memory().total
        self._last_cpu = self._cpu_seconds()
        self._last_time = now
        self.cpu_load = 0.0

    def _cpu_seconds(self) -> float:
        t = self._proc.cpu_times()
        return float(t.user + t.system)

    def update(self, now: float) -> None:
        cpu = self._cpu_seconds()
        elapsed = now - self._last_time
        if elapsed > 0:
            self.cpu_load = max(0.0, min(1.0, (cpu - self._last_cpu) / (elapsed * self._cores)))
        self._last_cpu, self._last_time = cpu, now

    def cpu_time_ns(self) -> int:
        return int(self._cpu_seconds() * 1e9)

    def rss(self) -> int:
        return int(self._proc.memory_info().rss)

    def vms(self) -> int:
        return int(self._proc.memory_info().vms)

    def threads(self) -> int:
        return int(self._proc.num_threads())

    @property
    def total_memory(self) -> int:
        return int(self._total_memory)


def _gc_count(generation: int) -> int:
    return int(gc.get_stats()[generation]["collections"])


def _gc_collected(generation: int) -> int:
    return int(gc.get_stats()[generation]["collected"])


class _GcTimer:
    """Milliseconds per generation spent in the cyclic collector (a ``gc.callbacks`` hook; one per
    process). A collection runs with the GIL held and never inside another, so one start time
    suffices."""

    def __init__(self) -> None:
        self.total_ns = [0] * len(gc.get_stats())
        self._started = 0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter_ns()
        elif self._started:
            generation = info.get("generation", 0)
            if 0 <= generation < len(self.total_ns):
                self.total_ns[generation] += time.perf_counter_ns() - self._started
            self._started = 0

    def millis(self, generation: int) -> int:
        return self.total_ns[generation] // 1_000_000


_GC_TIMER: _GcTimer | None = None


def gc_timer() -> _GcTimer:
    """This process's collector timer, installed on first use."""
    global _GC_TIMER
    if _GC_TIMER is None:
        _GC_TIMER = _GcTimer()
        gc.callbacks.append(_GC_TIMER)
    return _GC_TIMER


def register_process_metrics(
    registry: MetricRegistry, host: str, kind: str, tm_id: str = ""
) -> AbstractMetricGroup:
    """The process scope (``jobmanager`` or ``taskmanager``) with its ``Status`` metrics."""
    if kind == "taskmanager":
        group = AbstractMetricGroup(
            registry, (host, "taskmanager", tm_id), (), {"<host>": host, "<tm_id>": tm_id}, ("taskmanager",)
        )
    else:
        group = AbstractMetricGroup(registry, (host, "jobmanager"), (), {"<host>": host}, ("jobmanager",))
    sampler = _ProcessSampler(registry.clock())
    registry.add_view(sampler)
    jvm = group.add_group("Status").add_group("JVM")
    assert isinstance(jvm, AbstractMetricGroup)
    cpu = jvm.add_group("CPU")
    assert isinstance(cpu, AbstractMetricGroup)
    cpu.metric("Load", FunctionGauge(lambda: sampler.cpu_load))
    cpu.gauge("Time", sampler.cpu_time_ns)
    heap = jvm.add_group("Memory").add_group("Heap")
    heap.gauge("Used", sampler.rss)
    heap.gauge("Committed", sampler.rss)
    heap.gauge("Max", lambda: sampler.total_memory)
    jvm.add_group("Threads").gauge("Count", sampler.threads)
    collectors = jvm.add_group("GarbageCollector")
    python_gc = group.add_group("Status").add_group("Python").add_group("GC")
    timer = gc_timer()
    for generation in range(len(gc.get_stats())):
        count = functools.partial(_gc_count, generation)
        millis = functools.partial(timer.millis, generation)
        jvm_gen = collectors.add_group(f"gen{generation}")
        jvm_gen.gauge("Count", count)
        jvm_gen.gauge("Time", millis)
        own = python_gc.add_group(f"gen{generation}")
        own.gauge("Count", count)
        own.gauge("Time", millis)
        own.gauge("Collected", functools.partial(_gc_collected, generation))
    jvm.add_group("ClassLoader").gauge("ClassesLoaded", lambda: len(sys.modules))
    proc = group.add_group("Status").add_group("Process")
    proc.add_group("CPU").gauge("Time", sampler.cpu_time_ns)
    memory = proc.add_group("Memory")
    memory.gauge("RSS", sampler.rss)
    memory.gauge("VMS", sampler.vms)
    proc.add_group("Threads").gauge("Count", sampler.threads)
    registry.process_group = group
    return group

