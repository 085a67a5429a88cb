"""Timers of a keyed operator (Flink's ``InternalTimerServiceImpl``) and the user's TimerService.

Timers are ``(timestamp, key, namespace)`` in two queues of the operator's
keyed state backend, one per time domain, deduplicated. Event-time timers fire
when a watermark passes them (:meth:`InternalTimerService.advance_watermark`),
in timestamp order, with the backend's current key set to the timer's key.
Processing-time timers fire from the task's :class:`ProcessingTimeService`:
the service holds one callback, at the earliest processing-time timer, and
moves it when an earlier timer is registered.

Restored timers: the queues are keyed state, restored from a checkpoint with the rest
(``restore_keyed_backend``). A service created on a backend that already holds restored
timers schedules its earliest processing-time timer at once; if the timers are restored
after the service was created, the queue's restore listener does the same. Restored
event-time timers need nothing: they fire on the next watermark that passes them.

Pure synchronous code: tests drive it with a hand-made clock and plain
``advance_watermark`` calls.
"""

from __future__ import annotations

from typing import Any, Protocol

from flott.api.streaming.timer_service import TimerService
from flott.runtime.operators.processing_time import ProcessingTimeService, ScheduledCallback
from flott.runtime.operators.watermark import LONG_MIN
from flott.runtime.state.backend import KeyedStateBackend

VOID_NAMESPACE = None
"""The namespace of timers that belong to no window (KeyedProcessFunction's)."""


class Triggerable(Protocol):
    """What a timer calls back (Flink's ``Triggerable``); the backend's current key is the timer's."""

    def on_event_time(self, timestamp: int, key: Any, namespace: Any) -> None: ...

    def on_processing_time(self, timestamp: int, key: Any, namespace: Any) -> None: ...


class InternalTimerService:
    """Event-time and processing-time timers of one operator, kept in its keyed state."""

    def __init__(
        self,
        name: str,
        backend: KeyedStateBackend,
        processing_time_service: ProcessingTimeService,
        triggerable: Triggerable,
    ) -> None:
        self.name = name
        self._backend = backend
        self._pts = processing_time_service
        self._triggerable = triggerable
        self.event_time_timers = backend.timer_queue(f"_timer_state/event_{name}")
        self.processing_time_timers = backend.timer_queue(f"_timer_state/processing_{name}")
        self.current_watermark = LONG_MIN
        self._scheduled: ScheduledCallback | None = None
        self._closed = False
        self.processing_time_timers.add_restore_listener(self.restore)
        self.restore()  # timers restored before the service existed

    # --- registration (for the backend's current key) ------------------------------------------

    def current_processing_time(self) -> int:
        return self._pts.get_current_processing_time()

    def register_event_time_timer(self, namespace: Any, timestamp: int) -> None:
        self.event_time_timers.add(timestamp, self._backend.current_key, namespace)

    def delete_event_time_timer(self, namespace: Any, timestamp: int) -> None:
        self.event_time_timers.remove(timestamp, self._backend.current_key, namespace)

    def register_processing_time_timer(self, namespace: Any, timestamp: int) -> None:
        queue = self.processing_time_timers
        earliest = queue.peek_timestamp()
        if queue.add(timestamp, self._backend.current_key, namespace) and (
            earliest is None or timestamp < earliest
        ):
            self._schedule(timestamp)

    def delete_processing_time_timer(self, namespace: Any, timestamp: int) -> None:
        # The wall-clock callback stays; finding nothing due when it fires is harmless.
        self.processing_time_timers.remove(timestamp, self._backend.current_key, namespace)

    # --- firing ---------------------------------------------------------------------------------

    def advance_watermark(self, watermark: int) -> None:
        """Fire every event-time timer at or before ``watermark``, earliest first."""
        self.current_watermark = watermark
        poll = self.event_time_timers.poll
        backend = self._backend
        on_event_time = self._triggerable.on_event_time
        while (timer := poll(watermark)) is not None:
            timestamp, key, namespace = timer
            backend.current_key = key
            on_event_time(timestamp, key, namespace)

    def _schedule(self, timestamp: int) -> None:
        if self._scheduled is not None:
            if self._scheduled.time <= timestamp and not self._scheduled.cancelled:
                return
            self._scheduled.cancel()
        self._scheduled = self._pts.register_timer(timestamp, self._on_processing_time)

    def _on_processing_time(self, time: int) -> None:
        self._scheduled = None
        poll = self.processing_time_timers.poll
        backend = self._backend
        on_processing_time = self._triggerable.on_processing_time
        now = max(time, self._pts.get_current_processing_time())
        while (timer := poll(now)) is not None:
            timestamp, key, namespace = timer
            backend.current_key = key
            on_processing_time(timestamp, key, namespace)
        following = self.processing_time_timers.peek_timestamp()
        if following is not None:
            self._schedule(following)

    def restore(self) -> None:
        """After restoring the queues from a snapshot: wake up for the earliest processing-time timer.

        Called on creation and by the queue after each restore; calling it again is harmless.
        Timers due already (the job was down when they were due) fire on the next
        :meth:`ProcessingTimeService.fire_due`.
        """
        if self._closed:
            return
        following = self.processing_time_timers.peek_timestamp()
        if following is not None:
            self._schedule(following)

    def close(self) -> None:
        self._closed = True
        if self._scheduled is not None:
            self._scheduled.cancel()
            self._scheduled = None


class KeyedTimerService(TimerService):
    """``ctx.timer_service()`` of a KeyedProcessFunction: timers of the current key."""

    def __init__(self, internal: InternalTimerService) -> None:
        self._internal = internal

    def current_processing_time(self) -> int:
        return self._internal.current_processing_time()

    def current_watermark(self) -> int:
        return self._internal.current_watermark

    def register_processing_time_timer(self, timestamp: int) -> None:
        self._internal.register_processing_time_timer(VOID_NAMESPACE, int(timestamp))

    def register_event_time_timer(self, timestamp: int) -> None:
        self._internal.register_event_time_timer(VOID_NAMESPACE, int(timestamp))

    def delete_processing_time_timer(self, timestamp: int) -> None:
        self._internal.delete_processing_time_timer(VOID_NAMESPACE, int(timestamp))

    def delete_event_time_timer(self, timestamp: int) -> None:
        self._internal.delete_event_time_timer(VOID_NAMESPACE, int(timestamp))
