"""Wall-clock callbacks of one task (Flink's ``ProcessingTimeService``), without a timer thread.

Flink fires processing-time timers from a separate timer thread under the
checkpoint lock. Here every callback runs on the task's own thread, between
batches: the task loop asks :meth:`ProcessingTimeService.next_due` how long it
may block on its input and calls :meth:`fire_due` each time round. So user
code never runs concurrently with itself, and nothing needs a lock.

The clock is injected (epoch milliseconds, like ``System.currentTimeMillis``),
so tests drive time by hand instead of sleeping.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable

Clock = Callable[[], int]


def wall_clock_ms() -> int:
    """Epoch milliseconds: what processing-time timers and windows are measured in."""
    return time.time_ns() // 1_000_000


class ScheduledCallback:
    """A registered callback; :meth:`cancel` keeps it from firing."""

    __slots__ = ("callback", "cancelled", "time")

    def __init__(self, time_ms: int, callback: Callable[[int], None]) -> None:
        self.time = time_ms
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ProcessingTimeService:
    """Callbacks due at wall-clock times, fired in time order on the task thread."""

    def __init__(self, clock: Clock = wall_clock_ms) -> None:
        self.clock = clock
        self._queue: list[tuple[int, int, ScheduledCallback]] = []
        self._seq = itertools.count()
        self._quiesced = False

    def get_current_processing_time(self) -> int:
        return self.clock()

    def register_timer(self, time_ms: int, callback: Callable[[int], None]) -> ScheduledCallback:
        """Call ``callback(time_ms)`` once the clock reaches ``time_ms`` (at once if it has)."""
        handle = ScheduledCallback(time_ms, callback)
        if not self._quiesced:
            heapq.heappush(self._queue, (time_ms, next(self._seq), handle))
        return handle

    def next_due(self) -> int | None:
        """Time of the earliest pending callback (None: nothing registered)."""
        queue = self._queue
        while queue and queue[0][2].cancelled:
            heapq.heappop(queue)
        return queue[0][0] if queue else None

    def fire_due(self, now: int | None = None) -> int:
        """Fire every callback due at ``now`` (default: the clock) in time order; returns how many.

        Callbacks registered while firing for a time already due fire in this
        call too, unless they are due later than ``now``.
        """
        if now is None:
            now = self.clock()
        fired = 0
        queue = self._queue
        while queue and queue[0][0] <= now:
            _, _, handle = heapq.heappop(queue)
            if handle.cancelled:
                continue
            handle.cancelled = True
            handle.callback(handle.time)
            fired += 1
        return fired

    def quiesce(self) -> None:
        """Drop every pending callback and refuse new ones (the task is finishing, as Flink does)."""
        self._quiesced = True
        self._queue.clear()

    def num_pending(self) -> int:
        """Callbacks still to fire (not a ``__len__``: an empty service must stay truthy)."""
        return sum(1 for _, _, h in self._queue if not h.cancelled)
