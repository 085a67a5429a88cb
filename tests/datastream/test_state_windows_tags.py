"""Plain-data parts of the API: state descriptors and TTL, window arithmetic, output tags."""

from __future__ import annotations

import io
from typing import Any

import cloudpickle
import pytest

from flott.common import Time, Types
from flott.datastream.output_tag import OutputTag
from flott.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueState,
    ValueStateDescriptor,
)
from flott.datastream.window import (
    CountTrigger,
    CountWindow,
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindow,
    GlobalWindows,
    NeverTrigger,
    PurgingTrigger,
    SlidingEventTimeWindows,
    TimeWindow,
    TimeWindowSerializer,
    TriggerResult,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)


def test_state_descriptors_record_what_the_runtime_needs() -> None:
    value = ValueStateDescriptor("count", Types.LONG())
    assert value.get_name() == "count" and value.type_info == Types.LONG()
    listed = ListStateDescriptor("items", Types.STRING())
    assert listed.elem_type_info == Types.STRING()
    mapped = MapStateDescriptor("m", Types.STRING(), Types.INT())
    assert (mapped.key_type_info, mapped.value_type_info) == (Types.STRING(), Types.INT())
    reducing = ReducingStateDescriptor("sum", lambda a, b: a + b, Types.INT())
    assert reducing.get_reduce_function()(1, 2) == 3
    aggregating = AggregatingStateDescriptor("avg", object(), Types.INT())  # type: ignore[arg-type]
    assert aggregating.get_agg_function() is not None
    with pytest.raises(ValueError):
        ValueStateDescriptor("", Types.INT())
    restored = cloudpickle.loads(cloudpickle.dumps(value))
    assert restored == value and restored.get_name() == "count"


def test_state_ttl_config_builder() -> None:
    ttl = (
        StateTtlConfig.new_builder(Time.seconds(10))
        .update_ttl_on_read_and_write()
        .return_expired_if_not_cleaned_up()
        .cleanup_incrementally(10, False)  # True is refused: tests/state/test_ttl.py
        .build()
    )
    assert ttl.is_enabled()
    assert ttl.get_update_type() is StateTtlConfig.UpdateType.OnReadAndWrite
    assert ttl.get_state_visibility() is StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp
    assert ttl.get_ttl_millis() == 10_000
    incremental = ttl.get_cleanup_strategies().get_incremental_cleanup_strategy()
    assert incremental is not None and incremental.get_cleanup_size() == 10
    descriptor = ValueStateDescriptor("v", Types.INT())
    descriptor.enable_time_to_live(ttl)
    assert descriptor.get_ttl_config() is ttl


def test_state_interfaces_are_abstract_with_pyflink_methods() -> None:
    with pytest.raises(TypeError):
        ValueState()  # type: ignore[abstract]

    class DictMapState(MapState):
        def __init__(self) -> None:
            self.d: dict[Any, Any] = {}

        def get(self, key: Any) -> Any:
            return self.d.get(key)

        def put(self, key: Any, value: Any) -> None:
            self.d[key] = value

        def put_all(self, dict_value: dict[Any, Any]) -> None:
            self.d.update(dict_value)

        def remove(self, key: Any) -> None:
            self.d.pop(key, None)

        def contains(self, key: Any) -> bool:
            return key in self.d

        def items(self) -> Any:
            return self.d.items()

        def keys(self) -> Any:
            return self.d.keys()

        def values(self) -> Any:
            return self.d.values()

        def is_empty(self) -> bool:
            return not self.d

        def clear(self) -> None:
            self.d.clear()

    m = DictMapState()
    m["a"] = 1
    assert "a" in m and list(m) == ["a"] and m["a"] == 1
    del m["a"]
    assert m.is_empty()


def test_time_window_arithmetic() -> None:
    w = TimeWindow(0, 10)
    assert w.max_timestamp() == 9
    assert w.intersects(TimeWindow(10, 20)) and not w.intersects(TimeWindow(11, 20))
    assert w.cover(TimeWindow(5, 15)) == TimeWindow(0, 15)
    assert TimeWindow.get_window_start_with_offset(17, 0, 5) == 15
    assert TimeWindow.get_window_start_with_offset(-3, 0, 5) == -5
    merges: list[tuple[list[TimeWindow], TimeWindow]] = []

    class Callback:
        def merge(self, to_be_merged: Any, merge_result: TimeWindow) -> None:
            merges.append((list(to_be_merged), merge_result))

    TimeWindow.merge_windows([TimeWindow(5, 12), TimeWindow(0, 6), TimeWindow(20, 25)], Callback())  # type: ignore[arg-type]
    assert merges == [([TimeWindow(0, 6), TimeWindow(5, 12)], TimeWindow(0, 12))]
    buffer = io.BytesIO()
    TimeWindowSerializer().serialize(TimeWindow(3, 8), buffer)
    buffer.seek(0)
    assert TimeWindowSerializer().deserialize(buffer) == TimeWindow(3, 8)
    assert CountWindow(3) == CountWindow(3) and GlobalWindow.get() is GlobalWindow.get()


def test_window_assigners_compute_windows() -> None:
    tumbling = TumblingEventTimeWindows.of(Time.seconds(5))
    assert tumbling.assign_windows("x", 7_000, None) == [TimeWindow(5_000, 10_000)]  # type: ignore[arg-type]
    assert tumbling.is_event_time() and isinstance(tumbling.get_default_trigger(None), EventTimeTrigger)
    sliding = SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5))
    assert sorted(sliding.assign_windows("x", 7_000, None)) == [  # type: ignore[arg-type]
        TimeWindow(0, 10_000),
        TimeWindow(5_000, 15_000),
    ]
    assert EventTimeSessionWindows.with_gap(Time.seconds(1)).assign_windows("x", 500, None) == [  # type: ignore[arg-type]
        TimeWindow(500, 1_500)
    ]

    class Clock:
        def get_current_processing_time(self) -> int:
            return 12_345

    processing = TumblingProcessingTimeWindows.of(Time.seconds(10))
    assert processing.assign_windows("x", 0, Clock()) == [TimeWindow(10_000, 20_000)]  # type: ignore[arg-type]
    assert isinstance(GlobalWindows.create().get_default_trigger(None), NeverTrigger)
    with pytest.raises(ValueError, match="timestamp"):
        tumbling.assign_windows("x", None, None)  # type: ignore[arg-type]


def test_triggers_decide_over_the_trigger_context() -> None:
    class Ctx:
        def __init__(self) -> None:
            self.timers: list[int] = []
            self.count: list[int] = []

        def get_current_watermark(self) -> int:
            return 100

        def register_event_time_timer(self, time: int) -> None:
            self.timers.append(time)

        def get_partitioned_state(self, descriptor: Any) -> Any:
            ctx = self

            class Reducing:
                def add(self, value: int) -> None:
                    ctx.count.append(value)

                def get(self) -> int:
                    return sum(ctx.count)

                def clear(self) -> None:
                    ctx.count.clear()

            return Reducing()

    ctx = Ctx()
    trigger = EventTimeTrigger.create()
    assert trigger.on_element("x", 0, TimeWindow(0, 50), ctx) is TriggerResult.FIRE  # type: ignore[arg-type]
    assert trigger.on_element("x", 0, TimeWindow(0, 500), ctx) is TriggerResult.CONTINUE  # type: ignore[arg-type]
    assert ctx.timers == [499]
    purging_count = PurgingTrigger.of(CountTrigger.of(2))
    assert purging_count.on_element("a", 0, CountWindow(0), ctx) is TriggerResult.CONTINUE  # type: ignore[arg-type]
    assert purging_count.on_element("b", 0, CountWindow(0), ctx) is TriggerResult.FIRE_AND_PURGE  # type: ignore[arg-type]
    assert TriggerResult.FIRE_AND_PURGE.is_fire() and TriggerResult.FIRE_AND_PURGE.is_purge()


def test_output_tags_compare_by_id_and_type() -> None:
    tag = OutputTag("late", Types.STRING())
    assert tag == OutputTag("late", Types.STRING())
    assert tag != OutputTag("late", Types.INT())
    assert cloudpickle.loads(cloudpickle.dumps(tag)) == tag
    assert OutputTag("row", [Types.INT(), Types.STRING()]).type_info == Types.ROW(
        [Types.INT(), Types.STRING()]
    )
    with pytest.raises(ValueError):
        OutputTag("")
