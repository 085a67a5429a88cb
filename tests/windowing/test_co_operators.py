"""Two-input operators driven by hand: per-input functions, shared keyed state, timers."""

from __future__ import annotations

from typing import Any

from flott.datastream.functions import CoFlatMapFunction, CoMapFunction, KeyedCoProcessFunction
from flott.datastream.output_tag import OutputTag
from flott.datastream.state import ValueStateDescriptor
from flott.runtime.operators.specs import KeySelectorPair
from flott.runtime.operators.stream_operator import SIDE_OUTPUT_TAGS
from flott.runtime.operators.watermark import LONG_MAX
from tests.windowing.harness import OperatorHarness

ALERTS = OutputTag("alerts")


class Tag(CoMapFunction):
    def map1(self, value: Any) -> Any:
        return ("left", value)

    def map2(self, value: Any) -> Any:
        return ("right", value)


class Split(CoFlatMapFunction):
    def flat_map1(self, value: Any) -> Any:
        yield from value.split()

    def flat_map2(self, value: Any) -> Any:
        return [value] * value


def test_co_map_and_co_flat_map_call_the_method_of_each_input() -> None:
    h = OperatorHarness("co_map", Tag(), timestamped=False)
    assert h.process(1, 2) == [("left", 1), ("left", 2)]
    assert h.process2(3) == [("right", 3)]
    f = OperatorHarness("co_flat_map", Split())
    assert f.process(("a b", 5)) == [("a", 5), ("b", 5)], "outputs keep their input's timestamp"
    assert f.process2((2, None)) == [(2, None), (2, None)]


class Threshold(KeyedCoProcessFunction):
    """Input 1 sets a per-key threshold, input 2 values; above it: an alert (side output) and a
    timer 10 ms later that reports the last value."""

    def open(self, runtime_context: Any) -> None:
        self.limit = runtime_context.get_state(ValueStateDescriptor("limit", None))
        self.last = runtime_context.get_state(ValueStateDescriptor("last", None))

    def process_element1(self, value: Any, ctx: Any) -> Any:
        self.limit.update(value[1])
        return None

    def process_element2(self, value: Any, ctx: Any) -> Any:
        self.last.update(value[1])
        limit = self.limit.value()
        if limit is not None and value[1] > limit:
            yield ALERTS, (ctx.get_current_key(), value[1])
            ctx.timer_service().register_event_time_timer(ctx.timestamp() + 10)
        yield value

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield ("timer", ctx.get_current_key(), timestamp, self.last.value(), ctx.time_domain().name)


def test_keyed_co_process_shares_state_across_inputs_and_has_timers_and_side_outputs() -> None:
    h = OperatorHarness(
        "keyed_co_process",
        Threshold(),
        key=KeySelectorPair(lambda r: r[0], lambda r: r[0]),
        config={SIDE_OUTPUT_TAGS: [ALERTS.tag_id]},
    )
    h.process((("a", 5), 1), (("b", 100), 2))
    out = h.process2((("a", 3), 10), (("a", 9), 20), (("b", 50), 30))
    assert out == [
        (("a", 3), 10),
        ((ALERTS, ("a", 9)), 20),
        (("a", 9), 20),
        (("b", 50), 30),
    ]
    h.process2((("a", 4), 25))
    assert h.watermark(29) == []
    assert h.watermark(LONG_MAX) == [(("timer", "a", 30, 4, "EVENT_TIME"), 30)]
