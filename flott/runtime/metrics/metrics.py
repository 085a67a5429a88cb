"""The metric kinds (Flink's SimpleCounter, MeterView, Gauge; PyFlink's Distribution).

Updates happen on the task's thread and must cost what a user expects of a
counter: ``inc`` is one attribute add, nothing else (no lock: one thread
writes, readers on the heartbeat thread see a recent value, as Flink's
non-volatile SimpleCounter gives). Reading a value happens when metrics are
reported, never per record.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from flott.metrics import Counter, Distribution, Meter, Metric


class SimpleCounter(Counter):
    __slots__ = ("_count",)

    def __init__(self) -> None:
        self._count = 0

    def inc(self, n: int = 1) -> None:
        self._count += n

    def dec(self, n: int = 1) -> None:
        self._count -= n

    def get_count(self) -> int:
        return self._count


class MeterView(Meter):
    """Events marked, and their rate per second over the last ``time_span_in_seconds``.

    Like Flink's MeterView, the rate is (events in the window) / (window length),
    so it ramps up over the first window. The window is sampled whenever the rate
    is read (``clock`` is the reporter's clock), not by a timer on the data path.
    """

    __slots__ = ("_count", "_samples", "_span")

    def __init__(self, time_span_in_seconds: int, now: float) -> None:
        if time_span_in_seconds <= 0:
            raise ValueError(f"time_span_in_seconds must be positive, got {time_span_in_seconds}")
        self._count = 0
        self._span = float(time_span_in_seconds)
        self._samples: deque[tuple[float, int]] = deque([(now, 0)])

    def mark_event(self, value: int = 1) -> None:
        self._count += value

    def get_count(self) -> int:
        return self._count

    @property
    def time_span_in_seconds(self) -> float:
        return self._span

    def get_rate(self, now: float) -> float:
        count = self._count
        samples = self._samples
        cutoff = now - self._span
        while len(samples) > 1 and samples[1][0] <= cutoff:
            samples.popleft()
        base = samples[0][1] if samples[0][0] <= cutoff else 0
        samples.append((now, count))
        return (count - base) / self._span


class DistributionImpl(Distribution):
    """Count, sum, min and max of the values passed to ``update`` (PyFlink's is Beam's distribution)."""

    __slots__ = ("count", "max", "min", "sum")

    def __init__(self) -> None:
        self.count = 0
        self.sum = 0
        self.min: int | None = None
        self.max: int | None = None

    def update(self, value: int) -> None:
        self.count += 1
        self.sum += value
        if self.min is None or value < self.min:
            self.min = value
        if self.max is None or value > self.max:
            self.max = value

    def __str__(self) -> str:
        # What Flink shows for PyFlink's distribution: the toString of Beam's DistributionResult gauge.
        lo = self.min if self.min is not None else 9223372036854775807
        hi = self.max if self.max is not None else -9223372036854775808
        return f"DistributionResult{{sum={self.sum}, count={self.count}, min={lo}, max={hi}}}"


class FunctionGauge(Metric):
    """A gauge whose value is the user's callable's result, read when metrics are reported."""

    __slots__ = ("_obj",)

    def __init__(self, obj: Callable[[], Any]) -> None:
        if not callable(obj):
            raise TypeError(f"a gauge needs a callable returning its value, got {type(obj).__name__}")
        self._obj = obj

    def get_value(self) -> Any:
        return self._obj()
