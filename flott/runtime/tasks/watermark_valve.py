"""Combining the watermarks of a task's input channels (Flink's ``StatusWatermarkValve``).

A task reads several channels (one per upstream subtask); its event time is
the *minimum* over the channels, because any channel may still deliver an
older record. Idle channels (an upstream source that has nothing to read and
said so with ``WatermarkStatus(IDLE)``) are left out of the minimum, so one
quiet partition does not stall every window downstream.

Rules, per channel: a watermark only counts while the channel is active and
only if it advances that channel. A channel that comes back from idle is
*aligned* again only once its watermark catches up with what the valve already
emitted; until then it cannot pull the output back. When the last active
channel goes idle, the valve emits the largest watermark of all channels (no
one can hold time back any more) and then IDLE; the first channel that becomes
active again makes it emit ACTIVE.

Pure, synchronous code: the task feeds events in and the valve calls
``output.emit_watermark`` / ``output.emit_watermark_status``.
"""

from __future__ import annotations

from typing import Protocol

from flott.runtime.operators.watermark import LONG_MIN, WatermarkStatus


class ValveOutput(Protocol):
    def emit_watermark(self, timestamp: int) -> None: ...

    def emit_watermark_status(self, status: WatermarkStatus) -> None: ...


class _Channel:
    __slots__ = ("active", "aligned", "watermark")

    def __init__(self) -> None:
        self.watermark = LONG_MIN
        self.active = True
        self.aligned = True


class StatusWatermarkValve:
    """Watermark and status of ``num_channels`` channels folded into one output."""

    def __init__(self, num_channels: int, output: ValveOutput) -> None:
        if num_channels < 1:
            raise ValueError("a valve needs at least one channel")
        self._channels = [_Channel() for _ in range(num_channels)]
        self._output = output
        self.last_output_watermark = LONG_MIN
        self.idle = False
        """Status last emitted: True after IDLE (every channel idle)."""

    @property
    def num_channels(self) -> int:
        return len(self._channels)

    def channel_watermark(self, channel: int) -> int:
        return self._channels[channel].watermark

    def input_watermark(self, timestamp: int, channel: int) -> None:
        ch = self._channels[channel]
        if self.idle or not ch.active or timestamp <= ch.watermark:
            return
        ch.watermark = timestamp
        if not ch.aligned and timestamp >= self.last_output_watermark:
            ch.aligned = True
        self._emit_min_of_aligned()

    def input_watermark_status(self, status: WatermarkStatus, channel: int) -> None:
        ch = self._channels[channel]
        if status.idle and ch.active:
            ch.active = False
            ch.aligned = False
            if not any(c.active for c in self._channels):
                # Nobody can hold time back any more: flush to the furthest watermark seen.
                if ch.watermark == self.last_output_watermark:
                    self._emit_max_of_all()
                self.idle = True
                self._output.emit_watermark_status(status)
            elif ch.watermark == self.last_output_watermark:
                # The channel that held the minimum left: the minimum of the rest may be later.
                self._emit_min_of_aligned()
        elif not status.idle and not ch.active:
            ch.active = True
            if ch.watermark >= self.last_output_watermark:
                ch.aligned = True
            if self.idle:
                self.idle = False
                self._output.emit_watermark_status(status)

    def _emit_min_of_aligned(self) -> None:
        aligned = [c.watermark for c in self._channels if c.aligned]
        if aligned:
            low = min(aligned)
            if low > self.last_output_watermark:
                self.last_output_watermark = low
                self._output.emit_watermark(low)

    def _emit_max_of_all(self) -> None:
        high = max(c.watermark for c in self._channels)
        if high > self.last_output_watermark:
            self.last_output_watermark = high
            self._output.emit_watermark(high)
