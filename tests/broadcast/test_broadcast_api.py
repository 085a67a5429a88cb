"""The broadcast, partition_custom and cache calls at plan time: PyFlink's checks and messages,
and the JobGraph they build (names, edges, inputs, the broadcast state names)."""

from __future__ import annotations

from typing import Any

import pytest

from flott.common import Types
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.broadcast_stream import BroadcastConnectedStream, BroadcastStream
from flott.datastream.functions import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from flott.datastream.state import MapStateDescriptor
from flott.graph.job_graph_generator import MissingUidWarning
from flott.runtime.jobgraph import JobGraph
from flott.runtime.operators.specs import BROADCAST_STATE_NAMES

RULES = MapStateDescriptor("rules", Types.STRING(), Types.INT())
MORE = MapStateDescriptor("more", Types.STRING(), Types.INT())


class Plain(BroadcastProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        yield value

    def process_broadcast_element(self, value: Any, ctx: Any) -> Any:
        return None


class Keyed(KeyedBroadcastProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        yield value

    def process_broadcast_element(self, value: Any, ctx: Any) -> Any:
        return None


def streams() -> tuple[StreamExecutionEnvironment, Any, Any]:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    return env, env.from_collection([("a", 1)]), env.from_collection([("a", 5)])


def edges(graph: JobGraph) -> list[tuple[str, str, str, int]]:
    name = {v.id: v.name for v in graph.vertices}
    return sorted((name[e.source], name[e.target], e.partitioner.kind, e.target_input) for e in graph.edges)


def test_broadcast_with_descriptors_makes_a_broadcast_stream_and_checks_them() -> None:
    _env, data, rules = streams()
    b = rules.broadcast(RULES, MORE)
    assert isinstance(b, BroadcastStream) and b.broadcast_state_descriptors == [RULES, MORE]
    connected = data.connect(b)
    assert isinstance(connected, BroadcastConnectedStream)
    assert connected.broadcast_state_descriptors == [RULES, MORE]
    with pytest.raises(TypeError, match="broadcast_state_descriptor must be MapStateDescriptor"):
        rules.broadcast(RULES, "more")
    with pytest.raises(ValueError, match="unique"):
        rules.broadcast(RULES, MapStateDescriptor("rules", Types.STRING(), Types.STRING()))
    with pytest.raises(ValueError, match="Cannot override partitioning for KeyedStream"):
        rules.key_by(lambda r: r[0]).broadcast(RULES)


def test_the_function_must_fit_the_stream() -> None:
    _env, data, rules = streams()
    with pytest.raises(TypeError, match="BroadcastProcessFunction should be applied to non-keyed DataStream"):
        data.key_by(lambda r: r[0]).connect(rules.broadcast(RULES)).process(Plain())
    with pytest.raises(
        TypeError, match="KeyedBroadcastProcessFunction should be applied to keyed DataStream"
    ):
        data.connect(rules.broadcast(RULES)).process(Keyed())
    with pytest.raises(TypeError, match="BroadcastProcessFunction"):
        data.connect(rules.broadcast(RULES)).process(lambda x: x)
    with pytest.raises(TypeError, match="output_type"):
        data.connect(rules.broadcast(RULES)).process(Plain(), output_type="STRING")


def test_keyed_broadcast_job_graph_has_a_hash_input_and_a_broadcast_input() -> None:
    env, data, rules = streams()
    data.key_by(lambda r: r[0]).connect(rules.broadcast(RULES, MORE)).process(
        Keyed(), output_type=[Types.STRING(), Types.INT()]
    ).print()
    with pytest.warns(MissingUidWarning, match="Keyed-Co-Process-Broadcast"):
        graph = env.get_job_graph()
    op = next(o for v in graph.vertices for o in v.operators if o.kind == "keyed_broadcast_process")
    assert op.name == "Keyed-Co-Process-Broadcast" and op.config[BROADCAST_STATE_NAMES] == ["rules", "more"]
    target = "Keyed-Co-Process-Broadcast -> Sink: Print to Std. Out"
    assert edges(graph) == [
        ("Source: Collection Source", target, "broadcast", 1),
        ("Source: Collection Source", target, "hash", 0),
    ]


def test_non_keyed_broadcast_keeps_the_main_inputs_partitioning() -> None:
    env, data, rules = streams()
    data.connect(rules.broadcast(RULES)).process(Plain()).print()
    graph = env.get_job_graph()
    target = "Co-Process-Broadcast -> Sink: Print to Std. Out"
    assert edges(graph) == [
        ("Source: Collection Source", target, "broadcast", 1),
        ("Source: Collection Source", target, "rebalance", 0),
    ]


def test_plain_broadcast_and_partition_custom_edges() -> None:
    env, data, _rules = streams()
    data.broadcast().map(lambda x: x).print()
    data.partition_custom(lambda k, n: 0, lambda r: r[0]).map(lambda x: x).print()
    kinds = sorted(kind for _s, _t, kind, _i in edges(env.get_job_graph()))
    assert kinds == ["broadcast", "custom"]
    with pytest.raises(TypeError, match="Parameter partitioner should be type of Partitioner"):
        data.partition_custom("p", lambda r: r)
    with pytest.raises(TypeError, match="Parameter key_selector should be type of KeySelector"):
        data.partition_custom(lambda k, n: 0, 3)
    with pytest.raises(ValueError, match="Cannot override partitioning for KeyedStream"):
        data.key_by(lambda r: r[0]).partition_custom(lambda k, n: 0, lambda r: r)
