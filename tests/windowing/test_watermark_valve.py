"""StatusWatermarkValve: the minimum over active channels, idleness and re-alignment (pure unit tests)."""

from __future__ import annotations

from flott.runtime.operators.watermark import ACTIVE, IDLE, LONG_MIN, WatermarkStatus
from flott.runtime.tasks.watermark_valve import StatusWatermarkValve


class Recorder:
    def __init__(self) -> None:
        self.events: list[object] = []

    def emit_watermark(self, timestamp: int) -> None:
        self.events.append(timestamp)

    def emit_watermark_status(self, status: WatermarkStatus) -> None:
        self.events.append("IDLE" if status.idle else "ACTIVE")

    def take(self) -> list[object]:
        events, self.events = self.events, []
        return events


def valve(n: int) -> tuple[StatusWatermarkValve, Recorder]:
    out = Recorder()
    return StatusWatermarkValve(n, out), out


def test_output_is_the_minimum_over_channels_and_only_advances() -> None:
    v, out = valve(3)
    v.input_watermark(10, 0)
    v.input_watermark(20, 1)
    assert out.take() == [], "channel 2 has no watermark yet: the minimum is still LONG_MIN"
    v.input_watermark(5, 2)
    assert out.take() == [5]
    v.input_watermark(30, 2)
    assert out.take() == [10]
    v.input_watermark(8, 0)  # going back on a channel is ignored
    v.input_watermark(10, 0)  # so is repeating one
    assert out.take() == []
    v.input_watermark(25, 0)
    assert out.take() == [20]
    assert v.last_output_watermark == 20


def test_single_channel_passes_watermarks_through() -> None:
    v, out = valve(1)
    for ts in (LONG_MIN + 1, 0, 0, 7, 3, 9):
        v.input_watermark(ts, 0)
    assert out.take() == [LONG_MIN + 1, 0, 7, 9]


def test_an_idle_channel_does_not_hold_back_the_others() -> None:
    v, out = valve(2)
    v.input_watermark(100, 0)
    assert out.take() == []
    v.input_watermark_status(IDLE, 1)
    assert out.take() == [100], "the idle channel held the minimum; the rest decides now"
    v.input_watermark(150, 0)
    assert out.take() == [150]
    v.input_watermark(500, 1)  # watermarks of an idle channel do not count
    assert out.take() == []


def test_all_idle_flushes_the_largest_watermark_then_reports_idle_and_active_again() -> None:
    v, out = valve(2)
    v.input_watermark(10, 0)
    v.input_watermark(40, 1)
    assert out.take() == [10]
    v.input_watermark_status(IDLE, 1)
    assert out.take() == []
    v.input_watermark_status(IDLE, 0)
    assert out.take() == [40, "IDLE"]
    assert v.idle
    v.input_watermark(50, 0)  # ignored while the channel is idle
    assert out.take() == []
    v.input_watermark_status(ACTIVE, 0)
    assert out.take() == ["ACTIVE"]
    v.input_watermark(50, 0)
    assert out.take() == [50]


def test_a_channel_back_from_idle_counts_only_once_it_caught_up() -> None:
    v, out = valve(2)
    v.input_watermark(10, 0)
    v.input_watermark(10, 1)
    assert out.take() == [10]
    v.input_watermark_status(IDLE, 1)
    v.input_watermark(100, 0)
    assert out.take() == [100]
    v.input_watermark_status(ACTIVE, 1)  # channel 1 is behind (10 < 100): not aligned yet
    v.input_watermark(50, 1)
    v.input_watermark(120, 0)
    assert out.take() == [120], "the lagging channel cannot pull the output back"
    v.input_watermark(130, 1)  # caught up: aligned again, it now holds the minimum
    v.input_watermark(200, 0)
    assert out.take() == [130]


def test_watermark_events_compare_and_pickle_by_value() -> None:
    import pickle

    from flott.runtime.operators.watermark import Watermark

    assert pickle.loads(pickle.dumps(Watermark(5))) == Watermark(5)
    assert pickle.loads(pickle.dumps(IDLE)) == IDLE and IDLE != ACTIVE
    assert repr(Watermark(3)) == "Watermark(3)"
