"""The metric kinds (Flink's SimpleCounter, MeterView, Gauge, TimerGauge; PyFlink's Distribution).

Updates happen on the task's thread and must cost what a user expects of a
counter: ``inc`` is one attribute add, nothing else (no lock: one thread
writes, readers on other threads see a recent value, as Flink's non-volatile
SimpleCounter gives). Rates are never computed on the data path: like Flink,
every metric that is a :class:`View` is updated by the registry's view
updater every :data:`UPDATE_INTERVAL_SECONDS` (Flink's
``View.UPDATE_INTERVAL_SECONDS``), and reading a rate returns the value
computed at the last update.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from typing import Any

from flott.metrics import Counter, Distribution, Meter, Metric

UPDATE_INTERVAL_SECONDS = 5
"""How often the view updater refreshes rates (Flink's View.UPDATE_INTERVAL_SECONDS)."""

_MIN_RAMP_SECONDS = 1.0
"""While a meter's history is shorter than its span, no rate is derived from less than this."""


class View(ABC):
    """A metric whose value is derived from samples the view updater takes (Flink's View)."""

    @abstractmethod
    def update(self, now: float) -> None:
        """Take a sample at ``now`` (seconds, the registry's monotonic clock)."""


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


class FunctionCounter(Counter):
    """A counter whose count is kept elsewhere (a task's IO figures): read, never incremented here."""

    __slots__ = ("_read",)

    def __init__(self, read: Callable[[], int]) -> None:
        self._read = read

    def inc(self, n: int = 1) -> None:
        raise TypeError("this counter is read from the task's IO figures and cannot be incremented")

    def dec(self, n: int = 1) -> None:
        raise TypeError("this counter is read from the task's IO figures and cannot be decremented")

    def get_count(self) -> int:
        return self._read()


class MeterView(Meter, View):
    """Events per second over the last ``time_span_in_seconds`` (Flink's MeterView).

    Flink's rule: the span is rounded down to a multiple of the update interval
    (at least one interval); a circular history of ``span / interval + 1``
    counts is sampled at every update, and the rate is (newest - oldest) / span.
    One difference, on purpose: Flink's history starts as zeros, so a new
    meter ramps up over its whole first span (a source at 2,000 records/s
    shows 167/s after 5 s). Here, until the history covers the span, the rate
    is the count since the meter was created divided by the time elapsed
    (from at least one second of history) — the true rate from the first
    update on, and Flink's value from the moment the window is full.

    ``count`` reads the events from elsewhere (a task's record counter);
    without it the meter counts ``mark_event`` calls itself.
    """

    __slots__ = ("_count", "_created", "_history", "_rate", "_read", "_span")

    def __init__(self, time_span_in_seconds: int, now: float, count: Callable[[], int] | None = None) -> None:
        if time_span_in_seconds <= 0:
            raise ValueError(f"time_span_in_seconds must be positive, got {time_span_in_seconds}")
        span = time_span_in_seconds - time_span_in_seconds % UPDATE_INTERVAL_SECONDS
        self._span = max(span, UPDATE_INTERVAL_SECONDS)
        self._count = 0
        self._read = count
        start = count() if count is not None else 0
        self._created = (now, start)
        self._history: deque[tuple[float, int]] = deque(maxlen=self._span // UPDATE_INTERVAL_SECONDS + 1)
        self._history.append(self._created)
        self._rate = 0.0

    def mark_event(self, value: int = 1) -> None:
        self._count += value

    def get_count(self) -> int:
        read = self._read
        return read() if read is not None else self._count

    @property
    def time_span_in_seconds(self) -> int:
        return self._span

    def get_rate(self) -> float:
        return self._rate

    def update(self, now: float) -> None:
        history = self._history
        count = self.get_count()
        full = len(history) == history.maxlen
        history.append((now, count))
        if full:
            self._rate = (count - history[0][1]) / self._span
            return
        since, base = self._created
        elapsed = now - since
        if elapsed >= _MIN_RAMP_SECONDS:
            self._rate = (count - base) / elapsed


class TaskTimeViews(View):
    """``busyTimeMsPerSecond``, ``idleTimeMsPerSecond``, ``backPressuredTimeMsPerSecond`` of a task.

    Flink's TimerGauges give the time spent in a state during the last update
    interval, in ms per second. Here the task thread adds nanoseconds to three
    accumulators once per batch or mailbox step (never per record), and each
    update takes the difference of each accumulator since the previous update,
    divided by the wall time between the two. The task accounts disjoint
    stretches of time, so the three sum to at most 1000; batching can move a
    few ms across an update boundary, so busy is capped at what idle and
    back-pressured time leave (Flink derives busy time that way too).
    """

    __slots__ = ("_last", "_read", "back_pressured", "busy", "idle")

    def __init__(self, read: Callable[[], tuple[int, int, int]], now: float) -> None:
        """``read`` returns the accumulated (busy, idle, back-pressured) nanoseconds."""
        self._read = read
        self._last = (now, *read())
        self.busy = 0.0
        self.idle = 0.0
        self.back_pressured = 0.0

    def update(self, now: float) -> None:
        busy_ns, idle_ns, bp_ns = self._read()
        then, busy0, idle0, bp0 = self._last
        elapsed = now - then
        if elapsed <= 0:
            return
        self._last = (now, busy_ns, idle_ns, bp_ns)
        per_second = 1e-6 / elapsed  # ns in the interval → ms per second

        def share(delta: int) -> float:
            return min(1000.0, max(0.0, delta * per_second))

        self.idle = share(idle_ns - idle0)
        self.back_pressured = share(bp_ns - bp0)
        self.busy = min(share(busy_ns - busy0), max(0.0, 1000.0 - self.idle - self.back_pressured))


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
    """A gauge whose value is the callable's result, read when metrics are reported."""

    __slots__ = ("_obj",)

    def __init__(self, obj: Callable[[], Any]) -> None:
        if not callable(obj):
            raise TypeError(f"a gauge needs a callable returning its value, got {type(obj).__name__}")
        self._obj = obj

    def get_value(self) -> Any:
        return self._obj()
