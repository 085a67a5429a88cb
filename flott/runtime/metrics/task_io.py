"""A task's system metrics under Flink's names (Flink's TaskIOMetricGroup, WatermarkGauge).

Nothing here runs on the record path: the task thread only adds to the plain
integers of its :class:`~flott.runtime.execution.environment.TaskIOMetrics`
once per batch (and writes a watermark into a list slot once per watermark);
the metrics registered here read those figures when they are reported, and
their rates and time shares are views the registry updates every few seconds.

Task scope: ``numRecordsIn``/``Out`` with their ``*PerSecond`` meters (60 s,
Flink's MeterView), ``numBytesIn``/``Out`` (bytes of serialised buffers: the
records a consumer in the same process takes as objects cross no wire and
count no bytes) with their meters, ``numBuffersIn``/``Out``,
``busyTimeMsPerSecond``, ``idleTimeMsPerSecond``,
``backPressuredTimeMsPerSecond`` (with Flink's hard/soft split: all
back-pressure here is a producer blocked on a full queue, i.e. hard),
``accumulated*Time`` (ms), ``isBackPressured`` and ``currentInputWatermark``.
Operator scope: ``currentInputWatermark`` and ``currentOutputWatermark``; a
source operator also has ``numRecordsIn``/``numRecordsOut`` and their meters
(the records it emitted into the chain: FLIP-33's source metrics).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from flott.runtime.metrics.groups import LONG_MIN_VALUE, AbstractMetricGroup, TaskMetricGroup
from flott.runtime.metrics.metrics import FunctionCounter, FunctionGauge, MeterView, TaskTimeViews

if TYPE_CHECKING:
    from flott.runtime.execution.environment import TaskIOMetrics
    from flott.runtime.jobgraph.job_graph import OperatorDescriptor

METER_SPAN_SECONDS = 60
"""Flink's IO meters average over one minute."""


def _counter_and_meter(group: AbstractMetricGroup, name: str, read: Any, now: float) -> None:
    group.metric(name, FunctionCounter(read))
    group.metric(f"{name}PerSecond", MeterView(METER_SPAN_SECONDS, now, read))


def register_task_io_metrics(
    group: TaskMetricGroup,
    io: TaskIOMetrics,
    gates: Sequence[Any],
    partitions: Sequence[Any],
    operators: Sequence[OperatorDescriptor],
) -> None:
    """Register the task's and its operators' system metrics (at deployment, before it runs)."""
    now = group.registry.clock()
    task = group.task

    def bytes_in() -> int:
        return sum(int(getattr(g, "num_bytes_received", 0)) for g in gates)

    def bytes_out() -> int:
        return sum(int(getattr(p, "num_bytes_sent", 0)) for p in partitions)

    _counter_and_meter(task, "numRecordsIn", lambda: io.num_records_in, now)
    _counter_and_meter(task, "numRecordsOut", lambda: io.num_records_out, now)
    _counter_and_meter(task, "numBytesIn", bytes_in, now)
    _counter_and_meter(task, "numBytesOut", bytes_out, now)
    task.metric("numBuffersIn", FunctionCounter(lambda: io.num_buffers_in))
    _counter_and_meter(task, "numBuffersOut", lambda: io.num_buffers_out, now)

    times = TaskTimeViews(lambda: (io.busy_time_ns, io.idle_time_ns, io.back_pressured_time_ns), now)
    group.add_view(times)
    # Flink: busy is a double, idle and back-pressured are whole ms (longs); floor keeps the sum ≤ 1000.
    task.metric("busyTimeMsPerSecond", FunctionGauge(lambda: times.busy))
    task.metric("idleTimeMsPerSecond", FunctionGauge(lambda: int(times.idle)))
    task.metric("backPressuredTimeMsPerSecond", FunctionGauge(lambda: int(times.back_pressured)))
    task.metric("hardBackPressuredTimeMsPerSecond", FunctionGauge(lambda: int(times.back_pressured)))
    task.metric("softBackPressuredTimeMsPerSecond", FunctionGauge(lambda: 0))
    task.metric("isBackPressured", FunctionGauge(lambda: times.back_pressured > 0))
    task.metric("accumulatedBusyTime", FunctionGauge(lambda: io.busy_time_ns // 1_000_000))
    task.metric("accumulatedIdleTime", FunctionGauge(lambda: io.idle_time_ns // 1_000_000))
    task.metric(
        "accumulatedBackPressuredTime", FunctionGauge(lambda: io.back_pressured_time_ns // 1_000_000)
    )

    # io.watermarks[i]: the input watermark of the chain's i-th operator after the source (the last
    # slot: what leaves the chain); the chain fills the list when it is built.
    marks = io.watermarks
    has_source = bool(operators) and operators[0].kind == "source"

    def mark(i: int) -> Callable[[], int]:
        return lambda: marks[i] if 0 <= i < len(marks) else LONG_MIN_VALUE

    if not has_source:
        task.metric("currentInputWatermark", FunctionGauge(mark(0)))
    offset = 1 if has_source else 0
    for k, descriptor in enumerate(operators):
        op = group.get_or_add_operator(descriptor.operator_id, descriptor.name)
        if k == 0 and has_source:
            # FLIP-33: a source operator's records in (read) and out (emitted) are the same records.
            _counter_and_meter(op, "numRecordsIn", lambda: io.source_records, now)
            _counter_and_meter(op, "numRecordsOut", lambda: io.source_records, now)
        j = k - offset
        if j >= 0:
            op.metric("currentInputWatermark", FunctionGauge(mark(j)))
        op.metric("currentOutputWatermark", FunctionGauge(mark(j + 1)))

