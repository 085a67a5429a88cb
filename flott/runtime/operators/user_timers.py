"""Firing user timers (``on_timer``) for the keyed process operators, one- and two-input.

Both operators collect what ``on_timer`` produces into a batch of their own,
hand it downstream when it is full, when a watermark passes, or after a
processing-time timer, and forward the watermark after the timers it fired.
"""

from __future__ import annotations

from typing import Any

from flott.api.streaming.time_domain import TimeDomain


class UserTimerFiring:
    """Mixin; the operator sets ``_on_timer``, ``_ctx``, ``_timer_out``, ``_batch_size``, ``timers``
    and ``_timer_results_timestamped``, and implements :meth:`_finish_timer_output`."""

    _on_timer: Any
    _ctx: Any
    _timer_out: list[Any]
    _batch_size: int
    _timer_results_timestamped: bool
    timers: Any
    output: Any
    current_watermark: int

    def _finish_timer_output(self, out: list[Any]) -> list[Any]:
        raise NotImplementedError

    def _fire(self, timestamp: int, domain: TimeDomain, output_timestamp: int | None) -> None:
        if self._on_timer is None:
            return
        ctx = self._ctx
        out = self._timer_out
        ctx.out = out
        ctx.domain = domain
        ctx.record_timestamp = timestamp
        produced = self._on_timer(timestamp, ctx)
        if produced is not None:
            if self._timer_results_timestamped:
                out.extend([(result, output_timestamp) for result in produced])
            else:
                out.extend(produced)
        if len(out) >= self._batch_size:
            self._flush_timer_output()

    def _flush_timer_output(self) -> None:
        out, self._timer_out = self._timer_out, []
        if out:
            out = self._finish_timer_output(out)
            if out:
                self.output.collect(out)

    def on_event_time(self, timestamp: int, key: Any, namespace: Any) -> None:
        self._fire(timestamp, TimeDomain.EVENT_TIME, timestamp)

    def on_processing_time(self, timestamp: int, key: Any, namespace: Any) -> None:
        self._fire(timestamp, TimeDomain.PROCESSING_TIME, None)
        self._flush_timer_output()

    def process_watermark(self, timestamp: int) -> None:
        self.current_watermark = timestamp
        self.timers.advance_watermark(timestamp)
        self._flush_timer_output()
        self.output.emit_watermark(timestamp)
