"""The client side of event time: API checks, timestamp paths, side-output edges, two-input edges."""

from __future__ import annotations

from typing import Any

import pytest

from flott.common import Duration, Types, WatermarkStrategy
from flott.common.watermark_strategy import TimestampAssigner
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.functions import (
    CoMapFunction,
    KeyedCoProcessFunction,
    ProcessFunction,
    ProcessWindowFunction,
)
from flott.datastream.output_tag import OutputTag
from flott.datastream.window import (
    CountTrigger,
    EventTimeSessionWindows,
    NeverTrigger,
    TumblingEventTimeWindows,
)
from flott.runtime.operators.stream_operator import (
    SIDE_OUTPUT_TAGS,
    TIMESTAMPED_INPUT,
    TIMESTAMPED_INPUT2,
    TIMESTAMPED_OUTPUT,
)
from flott.runtime.tasks.record_writer import OUTPUT_TAGS


class ByValue(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value)


def env() -> StreamExecutionEnvironment:
    e = StreamExecutionEnvironment.get_execution_environment()
    e.set_parallelism(2)
    return e


def strategy() -> WatermarkStrategy:
    return WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(1)).with_timestamp_assigner(
        ByValue()
    )


def configs(e: StreamExecutionEnvironment) -> dict[str, dict[str, Any]]:
    graph = e.get_job_graph()
    return {op.name: dict(op.config) for v in graph.vertices for op in v.operators}


def test_timestamps_start_at_the_assigner_and_stop_at_the_sink() -> None:
    e = env()
    e.from_collection([1, 2, 3]).map(lambda x: x).assign_timestamps_and_watermarks(strategy()).filter(
        lambda x: True
    ).key_by(lambda x: x % 2).reduce(lambda a, b: a + b).print()
    c = configs(e)
    assert c["Map"] == {}, "before the assigner records are bare values"
    assert c["Timestamps/Watermarks"] == {TIMESTAMPED_OUTPUT: True}
    assert c["Filter"] == {TIMESTAMPED_INPUT: True, TIMESTAMPED_OUTPUT: True}
    assert c["Reduce"] == {TIMESTAMPED_INPUT: True, TIMESTAMPED_OUTPUT: True}
    assert c["Sink: Print to Std. Out"] == {TIMESTAMPED_INPUT: True}
    vertex_names = [v.name for v in e.get_job_graph().vertices]
    assert "Map -> Timestamps/Watermarks -> Filter" in vertex_names, "the assigner chains like any operator"


def test_a_job_without_event_time_has_no_timestamps_anywhere() -> None:
    e = env()
    e.from_collection(["a b"]).flat_map(str.split).key_by(lambda w: w).reduce(lambda a, b: a).print()
    assert all(c == {} for c in configs(e).values())


def test_a_union_with_a_timestamped_input_makes_the_other_side_timestamped_too() -> None:
    e = env()
    plain = e.from_collection([1]).map(lambda x: x)
    timed = e.from_collection([2]).assign_timestamps_and_watermarks(strategy())
    plain.union(timed).print()
    graph = e.get_job_graph()
    ops = {(v.name, op.name): dict(op.config) for v in graph.vertices for op in v.operators}
    sources = [cfg for (vertex, name), cfg in ops.items() if name == "Source: Collection Source"]
    assert {TIMESTAMPED_OUTPUT: True} in sources, "the plain source emits (value, None) pairs"
    map_config = next(cfg for (_, name), cfg in ops.items() if name == "Map")
    assert map_config == {TIMESTAMPED_INPUT: True, TIMESTAMPED_OUTPUT: True}


def test_windows_always_emit_timestamps() -> None:
    e = env()
    e.from_collection([("a", 1)]).key_by(lambda x: x[0]).count_window(2).reduce(lambda a, b: a).map(
        lambda x: x
    ).print()
    c = configs(e)
    window = next(cfg for name, cfg in c.items() if name == "CountTumblingWindowAssigner")
    assert window == {TIMESTAMPED_OUTPUT: True}
    assert c["Map"] == {TIMESTAMPED_INPUT: True, TIMESTAMPED_OUTPUT: True}


def test_side_output_edges_leave_the_task_and_name_their_tag() -> None:
    tag = OutputTag("odd", Types.INT())

    class Split(ProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Any:
            yield (tag, value) if value % 2 else value

    e = env()
    main = e.from_collection([1, 2, 3]).process(Split())
    main.map(lambda x: x).print()
    main.get_side_output(tag).map(lambda x: -x).print()
    graph = e.get_job_graph()
    process_vertex = next(v for v in graph.vertices if v.operators[-1].name == "PROCESS")
    config = process_vertex.operators[-1].config
    assert config[SIDE_OUTPUT_TAGS] == ["odd"]
    side_edges = [eid for eid, tag_id in config[OUTPUT_TAGS].items() if tag_id == "odd"]
    assert len(side_edges) == 1
    assert len(graph.outputs_of(process_vertex.id)) == 2, "main and side output both leave the task"


def test_get_side_output_needs_an_operator() -> None:
    e = env()
    with pytest.raises(ValueError, match="operator"):
        e.from_collection([1]).rebalance().get_side_output(OutputTag("x"))
    with pytest.raises(TypeError):
        e.from_collection([1]).map(lambda x: x).get_side_output("x")  # type: ignore[arg-type]


def test_merging_windows_refuse_a_trigger_that_cannot_merge() -> None:
    keyed = env().from_collection([1]).key_by(lambda x: x)
    with pytest.raises(TypeError, match="merging"):
        keyed.window(EventTimeSessionWindows.with_gap(10)).trigger(NeverTrigger())
    keyed.window(EventTimeSessionWindows.with_gap(10)).trigger(CountTrigger.of(2))
    with pytest.raises(ValueError, match="negative"):
        keyed.window(TumblingEventTimeWindows.of(10)).allowed_lateness(-1)


def test_window_all_runs_at_parallelism_one() -> None:
    class Count(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Any) -> Any:
            yield len(list(elements))

    e = env()
    e.from_collection([1, 2]).window_all(TumblingEventTimeWindows.of(10)).process(Count()).print()
    graph = e.get_job_graph()
    window = next(v for v in graph.vertices if v.operators[0].kind == "window")
    assert window.parallelism == 1
    assert graph.inputs_of(window.id)[0].partitioner.kind == "hash"


class Both(CoMapFunction):
    def map1(self, value: Any) -> Any:
        return value

    def map2(self, value: Any) -> Any:
        return -value


def test_connected_streams_make_a_two_input_vertex() -> None:
    e = env()
    a = e.from_collection([1]).assign_timestamps_and_watermarks(strategy())
    b = e.from_collection([2])
    a.connect(b).map(Both()).print()
    graph = e.get_job_graph()
    co = next(v for v in graph.vertices if v.operators[0].kind == "co_map")
    assert sorted(edge.target_input for edge in graph.inputs_of(co.id)) == [0, 1]
    config = co.operators[0].config
    assert config[TIMESTAMPED_INPUT] and TIMESTAMPED_INPUT2 not in config and config[TIMESTAMPED_OUTPUT]


def test_keyed_connected_streams_need_a_keyed_co_process_function() -> None:
    e = env()
    a, b = e.from_collection([1]), e.from_collection([2])
    with pytest.raises(TypeError, match="KeyedCoProcessFunction"):
        a.connect(b).key_by(lambda x: x, lambda x: x).process(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="keyed ConnectedStreams"):

        class J(KeyedCoProcessFunction):
            def process_element1(self, value: Any, ctx: Any) -> Any:
                return None

            def process_element2(self, value: Any, ctx: Any) -> Any:
                return None

        a.connect(b).process(J())
    with pytest.raises(ValueError, match="keyed"):
        a.key_by(lambda x: x).connect(b).map(Both())
