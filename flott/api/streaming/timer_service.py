"""TimerService (Flink's ``org.apache.flink.streaming.api.TimerService``).

PyFlink's ``pyflink.datastream.timerservice`` re-exports it (``flott.datastream.timerservice``).

Keyed process functions reach time through this interface; the runtime
implements it per operator (``flott.runtime.operators.timer_service``): timers
are per key, deduplicated, kept in keyed state, and fire in timestamp order
(event time when a watermark passes them, processing time on the wall clock).
"""

from __future__ import annotations

from abc import ABC, abstractmethod


class TimerService(ABC):
    """Current time and timer (un)registration for the current key."""

    @abstractmethod
    def current_processing_time(self) -> int: ...

    @abstractmethod
    def current_watermark(self) -> int: ...

    @abstractmethod
    def register_processing_time_timer(self, timestamp: int) -> None: ...

    @abstractmethod
    def register_event_time_timer(self, timestamp: int) -> None: ...

    @abstractmethod
    def delete_processing_time_timer(self, timestamp: int) -> None: ...

    @abstractmethod
    def delete_event_time_timer(self, timestamp: int) -> None: ...
