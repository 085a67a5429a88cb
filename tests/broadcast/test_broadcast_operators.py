"""The broadcast operators driven by hand (no task, no sockets): read-only and read-write broadcast
state, keyed state and timers on the keyed side, side outputs, snapshot and restore of the state."""

from __future__ import annotations

from typing import Any

import pytest

from flott.common import Types
from flott.datastream.functions import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from flott.datastream.output_tag import OutputTag
from flott.datastream.state import MapStateDescriptor, ValueStateDescriptor
from flott.runtime.checkpoint.metadata import BROADCAST
from flott.runtime.operators.broadcast_operators import UNKNOWN_STATE, BroadcastStates
from flott.runtime.operators.specs import BROADCAST_STATE_NAMES, KeySelectorPair
from flott.runtime.operators.stream_operator import SIDE_OUTPUT_TAGS, TIMESTAMPED_INPUT2
from flott.runtime.operators.watermark import LONG_MAX
from tests.windowing.harness import OperatorHarness

RULES = MapStateDescriptor("rules", Types.STRING(), Types.INT())
OTHER = MapStateDescriptor("other", Types.STRING(), Types.INT())
UNDECLARED = MapStateDescriptor("nope", Types.STRING(), Types.INT())
LATE = OutputTag("late", Types.STRING())


def test_broadcast_states_views_snapshot_and_restore() -> None:
    states = BroadcastStates(["rules", "other"])
    rw = states.writable(RULES)
    ro = states.read_only(RULES)
    rw.put("a", 1)
    rw["b"] = 2
    rw.put_all({"c": 3})
    del rw["c"]
    rw.remove("missing")  # removing an absent key is no error (a map's remove)
    assert ro.get("a") == 1 and ro.get("zzz") is None and ro["b"] == 2
    assert "a" in ro and ro.contains("b") and not ro.contains("c")
    assert sorted(ro.items()) == [("a", 1), ("b", 2)] and sorted(ro) == ["a", "b"]
    assert sorted(ro.values()) == [1, 2] and not ro.is_empty() and states.read_only(OTHER).is_empty()
    assert not hasattr(ro, "put"), "the non-broadcast side cannot write"
    with pytest.raises(RuntimeError, match="read-only"):
        ro.clear()
    with pytest.raises(RuntimeError) as e:
        states.read_only(UNDECLARED)
    assert str(e.value) == UNKNOWN_STATE
    with pytest.raises(TypeError, match="MapStateDescriptor"):
        states.writable("rules")
    snap = states.snapshot()
    assert snap == {"rules": (BROADCAST, [("a", 1), ("b", 2)]), "other": (BROADCAST, [])}
    again = BroadcastStates(["rules", "other"])
    again.restore(lambda name: snap[name][1])
    assert again.contents("rules") == {"a": 1, "b": 2} and again.contents("other") == {}


class Enrich(BroadcastProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        limit = ctx.get_broadcast_state(RULES).get("limit")
        if limit is None:
            yield LATE, f"no rule yet for {value}"
        elif value > limit:
            yield f"{value} > {limit} at {ctx.timestamp()}"

    def process_broadcast_element(self, value: Any, ctx: Any) -> Any:
        ctx.get_broadcast_state(RULES).put(value[0], value[1])
        ctx.get_broadcast_state(OTHER).put("count", (ctx.get_broadcast_state(OTHER).get("count") or 0) + 1)
        yield f"rule {value} (watermark {ctx.current_watermark()})"


def broadcast_harness(function: Any, kind: str = "broadcast_process", **kw: Any) -> OperatorHarness:
    config = {
        BROADCAST_STATE_NAMES: ["rules", "other"],
        TIMESTAMPED_INPUT2: True,
        SIDE_OUTPUT_TAGS: [LATE.tag_id],
    }
    return OperatorHarness(kind, function, config=config, **kw)


def test_non_keyed_broadcast_process_reads_what_the_broadcast_side_wrote() -> None:
    h = broadcast_harness(Enrich())
    assert h.process((5, 1)) == [((LATE, "no rule yet for 5"), 1)]
    h.watermark(7)
    assert h.process2((("limit", 3), 2)) == [("rule ('limit', 3) (watermark 7)", 2)]
    assert h.process((5, 10), (2, 11)) == [("5 > 3 at 10", 10)]
    op: Any = h.operator
    assert op.snapshot_operator_state(1) == {
        "rules": (BROADCAST, [("limit", 3)]),
        "other": (BROADCAST, [("count", 1)]),
    }


class Writer(BroadcastProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        ctx.get_broadcast_state(RULES).put("x", 1)

    def process_broadcast_element(self, value: Any, ctx: Any) -> Any:
        ctx.timer_service().register_event_time_timer(5)


def test_the_non_broadcast_side_cannot_write_and_non_keyed_functions_have_no_timers() -> None:
    h = broadcast_harness(Writer())
    with pytest.raises(AttributeError):
        h.process((1, 1))
    with pytest.raises(RuntimeError, match="keyed"):
        h.process2(((1, 2), 2))


class Thresholds(KeyedBroadcastProcessFunction):
    """Keeps each key's last value; on its timer reports it against the key's broadcast limit."""

    def open(self, runtime_context: Any) -> None:
        self.last = runtime_context.get_state(ValueStateDescriptor("last", Types.INT()))

    def process_element(self, value: Any, ctx: Any) -> Any:
        self.last.update(value[1])
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 10)
        if ctx.get_broadcast_state(RULES).contains(ctx.get_current_key()):
            yield LATE, f"{ctx.get_current_key()} already has a rule"

    def process_broadcast_element(self, value: Any, ctx: Any) -> Any:
        ctx.get_broadcast_state(RULES).put(value[0], value[1])
        return None

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        key = ctx.get_current_key()
        limit = ctx.get_broadcast_state(RULES).get(key)
        yield (key, self.last.value(), limit, timestamp, ctx.timestamp(), ctx.time_domain().name)


def test_keyed_broadcast_process_has_keyed_state_timers_and_read_only_broadcast_state() -> None:
    h = broadcast_harness(Thresholds(), "keyed_broadcast_process", key=KeySelectorPair(lambda r: r[0], None))
    assert h.process((("a", 1), 1), (("b", 7), 2)) == []
    h.process2((("a", 4), 3))
    assert h.process((("a", 9), 5)) == [((LATE, "a already has a rule"), 5)]
    assert h.watermark(11) == [(("a", 9, 4, 11, 11, "EVENT_TIME"), 11)]
    assert h.watermark(LONG_MAX) == [
        (("b", 7, None, 12, 12, "EVENT_TIME"), 12),
        (("a", 9, 4, 15, 15, "EVENT_TIME"), 15),
    ]
    op: Any = h.operator
    assert op.snapshot_operator_state(1)["rules"] == (BROADCAST, [("a", 4)])


class TimerOnBroadcastSide(KeyedBroadcastProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        return None

    def process_broadcast_element(self, value: Any, ctx: Any) -> Any:
        ctx.timer_service().register_processing_time_timer(5)


def test_the_broadcast_side_of_a_keyed_function_cannot_set_timers() -> None:
    h = broadcast_harness(TimerOnBroadcastSide(), "keyed_broadcast_process", key=KeySelectorPair(len, None))
    with pytest.raises(RuntimeError, match="process_broadcast_element"):
        h.process2((("a", 1), 1))


class KeyedStateOnBroadcastSide(KeyedBroadcastProcessFunction):
    def open(self, runtime_context: Any) -> None:
        self.last = runtime_context.get_state(ValueStateDescriptor("last", Types.INT()))

    def process_element(self, value: Any, ctx: Any) -> Any:
        self.last.update(value[1])
        yield (ctx.get_current_key(), self.last.value())

    def process_broadcast_element(self, value: Any, ctx: Any) -> Any:
        self.last.value()


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_the_broadcast_side_has_no_keyed_state_not_even_of_the_last_key(backend: str) -> None:
    h = broadcast_harness(
        KeyedStateOnBroadcastSide(),
        "keyed_broadcast_process",
        key=KeySelectorPair(lambda r: r[0], None),
        job_config={"state.backend.type": backend},
    )
    assert h.process((("a", 1), 1)) == [(("a", 1), 1)]
    with pytest.raises(RuntimeError, match="Keyed state is not available in process_broadcast_element"):
        h.process2((("a", 4), 3))
    assert h.process((("a", 2), 4)) == [(("a", 2), 4)], "the next record sets its key again"


@pytest.mark.parametrize("keyed", [False, True])
def test_batch_execution_processes_the_whole_broadcast_side_first(keyed: bool) -> None:
    """Flink's BATCH rule: non-broadcast records and the watermark wait for the broadcast input's end."""
    if keyed:
        h = broadcast_harness(
            Thresholds(),
            "keyed_broadcast_process",
            key=KeySelectorPair(lambda r: r[0], None),
            streaming=False,
        )
        assert h.process((("a", 1), 1), (("b", 7), 2)) == []
        h.watermark(LONG_MAX)
        assert h.output.records == [], "timers wait with the records"
        h.process2((("a", 4), 3))
        h.operator.end_input2()
        assert h.output.take() == [
            ((LATE, "a already has a rule"), 1),
            (("a", 1, 4, 11, 11, "EVENT_TIME"), 11),
            (("b", 7, None, 12, 12, "EVENT_TIME"), 12),
        ], "the records ran after the rule arrived, then the watermark fired their timers"
        return
    h = broadcast_harness(Enrich(), streaming=False)
    assert h.process((5, 1), (2, 2)) == []
    assert h.process2((("limit", 3), 3)) == [("rule ('limit', 3) (watermark -9223372036854775808)", 3)]
    h.operator.end_input2()
    assert h.output.take() == [("5 > 3 at 1", 1)], "every record saw the complete broadcast state"
    assert h.process((9, 4)) == [("9 > 3 at 4", 4)], "after the broadcast side: straight through"
