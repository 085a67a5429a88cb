"""Watermarks and watermark status: the in-band time events between tasks (Flink's ``Watermark``,
``WatermarkStatus``).

A watermark ``t`` promises that no record with timestamp ``<= t`` follows on
that channel. Producers send them through ``ResultPartitionWriter.broadcast_event``
after everything emitted before them, so they stay ordered with the data.
They are tiny module-level classes: they pickle by reference, cost one buffer
slot each, and are only sent when the watermark advances (at most once per
``pipeline.auto-watermark-interval`` per source subtask, plus the final one).

Times are epoch milliseconds held in Python ints; Flink's ``Long.MIN_VALUE`` /
``Long.MAX_VALUE`` keep their meaning (no watermark yet / end of event time),
so records, timers and windows near the ends of time behave as in Flink.
"""

from __future__ import annotations

from typing import Final

LONG_MIN: Final = -(2**63)
"""No watermark yet (Flink's ``Long.MIN_VALUE``): the initial watermark of every operator."""

LONG_MAX: Final = 2**63 - 1
"""End of event time (Flink's ``Long.MAX_VALUE``): sent when a bounded input ends, fires every timer."""


class Watermark:
    """Event time has reached ``timestamp`` on the channel that carried this event."""

    __slots__ = ("timestamp",)

    def __init__(self, timestamp: int) -> None:
        self.timestamp = timestamp

    def __reduce__(self) -> tuple[type[Watermark], tuple[int]]:
        return (Watermark, (self.timestamp,))

    def __eq__(self, other: object) -> bool:
        return type(other) is Watermark and other.timestamp == self.timestamp

    def __hash__(self) -> int:
        return hash(self.timestamp)

    def __repr__(self) -> str:
        return f"Watermark({self.timestamp})"


MAX_WATERMARK: Final = Watermark(LONG_MAX)


class WatermarkStatus:
    """A channel became idle (it sends no watermarks for now and must not hold back time) or active."""

    __slots__ = ("idle",)

    def __init__(self, idle: bool) -> None:
        self.idle = idle

    @property
    def is_active(self) -> bool:
        return not self.idle

    def __reduce__(self) -> tuple[type[WatermarkStatus], tuple[bool]]:
        return (WatermarkStatus, (self.idle,))

    def __eq__(self, other: object) -> bool:
        return type(other) is WatermarkStatus and other.idle == self.idle

    def __hash__(self) -> int:
        return hash(self.idle)

    def __repr__(self) -> str:
        return "WatermarkStatus(IDLE)" if self.idle else "WatermarkStatus(ACTIVE)"


IDLE: Final = WatermarkStatus(True)
ACTIVE: Final = WatermarkStatus(False)
