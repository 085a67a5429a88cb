"""Timestamp assignment and watermark generation: bounded out-of-orderness, periodic emission,
idleness, and the operator that replaces upstream event time (pure, with a hand-driven clock)."""

from __future__ import annotations

from typing import Any

from flott.common import Duration, WatermarkStrategy
from flott.common.watermark_strategy import TimestampAssigner, WatermarkGenerator, WatermarkOutput
from flott.runtime.operators.processing_time import ProcessingTimeService
from flott.runtime.operators.stream_operator import TIMESTAMPED_OUTPUT, CollectingOutput
from flott.runtime.operators.timestamps_watermarks import (
    BoundedOutOfOrdernessWatermarks,
    TimestampsAndWatermarks,
    auto_watermark_interval_ms,
)
from flott.runtime.operators.watermark import LONG_MAX, LONG_MIN
from tests.windowing.harness import Clock, OperatorHarness


class First(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[0])


def generator(
    strategy: WatermarkStrategy, clock: Clock, timestamped_input: bool = False
) -> tuple[TimestampsAndWatermarks, CollectingOutput, ProcessingTimeService]:
    out = CollectingOutput()
    pts = ProcessingTimeService(clock)
    tw = TimestampsAndWatermarks(strategy, out, pts, 200, timestamped_input)
    tw.open(None)
    return tw, out, pts


def test_bounded_out_of_orderness_starts_at_long_min_and_trails_the_largest_timestamp() -> None:
    g = BoundedOutOfOrdernessWatermarks(1000)
    assert g.current_watermark() == LONG_MIN
    g.on_event(5000)
    g.on_event(3000)
    assert g.current_watermark() == 3999


def test_periodic_watermarks_follow_the_auto_watermark_interval() -> None:
    clock = Clock(0)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_millis(100)
    ).with_timestamp_assigner(First())
    tw, out, pts = generator(strategy, clock)
    assert tw.assign([(1000, "a"), (400, "b")]) == [((1000, "a"), 1000), ((400, "b"), 400)]
    clock.now = 199
    pts.fire_due()
    assert out.watermarks == []
    clock.now = 200
    pts.fire_due()
    assert out.watermarks == [899]
    clock.now = 400
    pts.fire_due()
    assert out.watermarks == [899], "no new watermark unless it advanced"
    tw.assign([(2000, "c")])
    clock.now = 600
    pts.fire_due()
    assert out.watermarks == [899, 1899]
    tw.emit_final_watermark()
    assert out.watermarks[-1] == LONG_MAX and pts.next_due() is None


def test_monotonous_timestamps_and_no_watermarks() -> None:
    clock = Clock(0)
    tw, out, pts = generator(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(First()), clock
    )
    tw.assign([(10, "x")])
    clock.now = 200
    pts.fire_due()
    assert out.watermarks == [9]
    tw, out, pts = generator(WatermarkStrategy.no_watermarks().with_timestamp_assigner(First()), clock)
    assert tw.assign([(10, "x")]) == [((10, "x"), 10)]
    assert pts.next_due() is None, "no periodic emission without watermarks"
    tw.emit_final_watermark()
    assert out.watermarks == [LONG_MAX], "the end of input still reaches everything downstream"


def test_without_an_assigner_records_keep_their_timestamps() -> None:
    clock = Clock(0)
    tw, out, pts = generator(WatermarkStrategy.for_monotonous_timestamps(), clock, timestamped_input=True)
    assert tw.assign([("a", 5), ("b", None)]) == [("a", 5), ("b", None)]
    clock.now = 200
    pts.fire_due()
    assert out.watermarks == [4]


def test_idleness_marks_the_output_idle_and_the_next_watermark_active_again() -> None:
    clock = Clock(0)
    strategy = (
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(0))
        .with_timestamp_assigner(First())
        .with_idleness(Duration.of_millis(500))
    )
    tw, out, pts = generator(strategy, clock)
    tw.assign([(100, "a")])
    for now in range(200, 1400, 200):
        clock.now = now
        pts.fire_due()
    assert [s.idle for s in out.statuses] == [True], "idle once no record came for 500 ms"
    assert out.watermarks == [99]
    tw.assign([(300, "b")])
    clock.now = 1400
    pts.fire_due()
    assert [s.idle for s in out.statuses] == [True, False]
    assert out.watermarks == [99, 299]


def test_the_operator_replaces_upstream_watermarks_except_the_final_one() -> None:
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(First())
    h = OperatorHarness(
        "timestamps_watermarks",
        strategy,
        timestamped=False,
        config={TIMESTAMPED_OUTPUT: True},
        job_config={"pipeline.auto-watermark-interval": "50 ms"},
    )
    assert h.process((7, "x")) == [((7, "x"), 7)]
    h.watermark(1_000_000)
    assert h.output.watermarks == []
    h.set_processing_time(50)
    assert h.output.watermarks == [6]
    h.watermark(LONG_MAX)
    assert h.output.watermarks == [6, LONG_MAX]


def test_auto_watermark_interval_is_read_from_the_job_configuration() -> None:
    assert auto_watermark_interval_ms({}) == 200
    assert auto_watermark_interval_ms({"pipeline.auto-watermark-interval": "1 s"}) == 1000
    assert auto_watermark_interval_ms({"pipeline.auto-watermark-interval": "0"}) == 0


class _Sequence(CollectingOutput):
    """Records and watermarks in the order they were emitted."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[Any] = []

    def collect(self, records: list[Any]) -> None:
        self.events.extend(records)

    def emit_watermark(self, timestamp: int) -> None:
        self.events.append(("watermark", timestamp))


class EveryOtherSecond(WatermarkGenerator):
    """Emits a watermark after a record whenever event time advanced by 2 s (largest seen)."""

    def __init__(self) -> None:
        self.largest = LONG_MIN
        self.ticks = 0

    def on_event(self, event: Any, event_timestamp: int, output: WatermarkOutput) -> None:
        self.largest = max(self.largest, event_timestamp)
        if self.largest >= 2000 * (self.ticks + 1):
            self.ticks = self.largest // 2000
            output.emit_watermark(self.largest)

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        output.emit_watermark(self.largest)


def test_a_generator_strategy_emits_its_watermarks_between_the_records_that_caused_them() -> None:
    clock = Clock(0)
    out = _Sequence()
    pts = ProcessingTimeService(clock)
    strategy = WatermarkStrategy.for_generator(EveryOtherSecond).with_timestamp_assigner(First())
    tw = TimestampsAndWatermarks(strategy, out, pts, 200, False)
    tw.open(None)
    rest = tw.assign([(1000, "a"), (2500, "b"), (1200, "late"), (4100, "c"), (4200, "d")])
    assert out.events == [((1000, "a"), 1000), ((2500, "b"), 2500), ("watermark", 2500),
                          ((1200, "late"), 1200), ((4100, "c"), 4100), ("watermark", 4100)]
    assert rest == [((4200, "d"), 4200)], "the records after the last watermark leave with the batch"
    clock.now = 200
    pts.fire_due()
    assert out.events[-1] == ("watermark", 4200), "the periodic tick asks the generator"
    assert WatermarkStrategy.for_generator(EveryOtherSecond).generates_watermarks()
