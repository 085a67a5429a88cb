"""StreamGraph → JobGraph translation: chaining, partitioners, names, ids, artifacts, config.

No job is executed here; graphs are built with ``flott.graph.build_job_graph``.
"""

from __future__ import annotations

import hashlib
import pickle
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cloudpickle
import pytest

from flott.common import Encoder, Types, WatermarkStrategy
from flott.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from flott.datastream.connectors.base import Boundedness
from flott.datastream.connectors.file_system import FileSink, FileSource, StreamFormat
from flott.errors import InvalidJobGraphError
from flott.graph import MissingUidWarning, build_job_graph
from flott.runtime.jobgraph import JobGraph, JobVertex, decode_job_graph, encode_job_graph
from flott.runtime.jobgraph.job_graph import blob_id


@pytest.fixture(autouse=True)
def _quiet_uid_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingUidWarning)
        yield


def env_with(parallelism: int = 2) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    return env


class StandInSource:
    """A Source of the connector contract, never read here."""

    def __init__(self, bounded: bool = True) -> None:
        self.bounded = bounded

    def get_boundedness(self) -> Boundedness:
        return Boundedness.BOUNDED if self.bounded else Boundedness.CONTINUOUS_UNBOUNDED

    def create_reader(self, subtask_index: int, parallelism: int) -> Any:
        raise AssertionError("not read in translation tests")


class StandInSink:
    def create_writer(self, subtask_index: int, parallelism: int, input_type: object | None) -> Any:
        raise AssertionError("not written in translation tests")


def by_name(graph: JobGraph, name: str) -> JobVertex:
    matches = [v for v in graph.vertices if v.name == name]
    assert len(matches) == 1, [v.name for v in graph.vertices]
    return matches[0]


def edge_kinds(graph: JobGraph) -> list[tuple[str, str, str]]:
    return [
        (graph.vertex(e.source).name, graph.vertex(e.target).name, e.partitioner.kind) for e in graph.edges
    ]


def word_count(env: StreamExecutionEnvironment, src: str, out: str) -> None:
    ds = env.from_source(
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), src)
        .process_static_file_set()
        .build(),
        WatermarkStrategy.no_watermarks(),
        "file_source",
    )
    ds = (
        ds.flat_map(lambda line: line.split())
        .map(lambda w: (w, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )
    ds.sink_to(FileSink.for_row_format(out, Encoder.simple_string_encoder()).build())


# --------------------------------------------------------------------------- the word count


def test_word_count_at_parallelism_two_is_two_vertices_joined_by_one_hash_edge(tmp_path: Path) -> None:
    env = env_with(2)
    word_count(env, str(tmp_path / "in.txt"), str(tmp_path / "out"))
    graph = build_job_graph(env, "word_count")

    assert [v.name for v in graph.topological_order()] == [
        "Source: file_source -> FlatMap -> Map",
        "Reduce -> Sink: Writer",
    ]
    head, tail = graph.topological_order()
    assert [op.kind for op in head.operators] == ["source", "flat_map", "map"]
    assert [op.kind for op in tail.operators] == ["reduce", "sink"]
    assert [op.name for op in head.operators + tail.operators] == [
        "Source: file_source",
        "FlatMap",
        "Map",
        "Reduce",
        "Sink: Writer",
    ]
    assert head.parallelism == tail.parallelism == 2
    assert head.max_parallelism == tail.max_parallelism == 128
    assert head.is_source and not tail.is_source

    (edge,) = graph.edges
    assert (edge.source, edge.target, edge.partitioner.kind) == (head.id, tail.id, "hash")
    assert edge.partitioner.key_selector is not None
    reduce_op = tail.operators[0]
    assert reduce_op.key_selector == edge.partitioner.key_selector, "one blob for the key selector"
    key_selector = cloudpickle.loads(graph.user_artifacts[edge.partitioner.key_selector])
    assert key_selector(("word", 1)) == "word"

    # declared types: Map declares a TUPLE; reduce inherits it; the sink's input is that type
    source_op, flat_map_op, map_op = head.operators
    sink_op = tail.operators[1]
    assert source_op.output_type is not None, "FileSource produces STRING"
    assert flat_map_op.input_type == source_op.output_type
    assert flat_map_op.output_type is None and map_op.input_type is None
    assert map_op.output_type is not None
    assert reduce_op.input_type == reduce_op.output_type == map_op.output_type
    assert sink_op.input_type == map_op.output_type
    assert cloudpickle.loads(graph.user_artifacts[map_op.output_type]) == Types.TUPLE(
        [Types.STRING(), Types.INT()]
    )
    assert sink_op.function is not None and source_op.function is not None
    assert isinstance(cloudpickle.loads(graph.user_artifacts[sink_op.function]), FileSink)
    assert isinstance(cloudpickle.loads(graph.user_artifacts[source_op.function]), FileSource)

    assert graph.job_name == "word_count"
    assert graph.config["pipeline.name"] == "word_count"
    assert graph.config["execution.runtime-mode"] == "STREAMING"
    assert graph.config["execution.buffer-timeout"] == "100"
    graph.validate()


def test_job_graph_round_trips_through_msgpack(tmp_path: Path) -> None:
    env = env_with(2)
    word_count(env, str(tmp_path / "in.txt"), str(tmp_path / "out"))
    graph = build_job_graph(env, "word_count")
    decoded = decode_job_graph(encode_job_graph(graph))
    assert decoded == graph


def test_translation_unpickles_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("translation must not unpickle user code")

    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(cloudpickle, "loads", refuse)
    monkeypatch.setattr(cloudpickle, "load", refuse)
    env = env_with(2)
    word_count(env, str(tmp_path / "in.txt"), str(tmp_path / "out"))
    graph = build_job_graph(env, "word_count")
    assert len(graph.vertices) == 2


def test_every_artifact_is_content_addressed_and_identical_blobs_are_stored_once() -> None:
    env = env_with(1)

    def double(x: int) -> int:
        return x * 2

    ds = env.from_collection([1, 2, 3], type_info=Types.INT())
    ds.map(double, output_type=Types.INT()).map(double, output_type=Types.INT()).print()
    graph = build_job_graph(env, "dedupe")
    for ref, data in graph.user_artifacts.items():
        assert ref == blob_id(data)
    (vertex,) = graph.vertices
    _, map1, map2, _ = vertex.operators
    assert map1.function == map2.function
    assert map1.output_type == map2.output_type == map1.input_type
    int_type_blobs = {op.output_type for op in vertex.operators if op.output_type is not None}
    assert len(int_type_blobs) == 1


# --------------------------------------------------------------------------- partitioners and chains


def test_parallelism_change_without_partitioner_is_rebalance_and_equal_is_forward_chained() -> None:
    env = env_with(4)
    ds = env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src").set_parallelism(2)
    ds.map(lambda x: x).set_parallelism(2).filter(lambda x: True).map(lambda x: x).print()
    graph = build_job_graph(env)
    assert sorted(edge_kinds(graph)) == [
        ("Source: src -> Map", "Filter -> Map -> Sink: Print to Std. Out", "rebalance"),
    ]
    assert by_name(graph, "Source: src -> Map").parallelism == 2
    assert by_name(graph, "Filter -> Map -> Sink: Print to Std. Out").parallelism == 4


def test_from_collection_is_a_parallelism_one_source_rebalanced_to_parallel_operators() -> None:
    env = env_with(3)
    ds = env.from_collection([1, 2, 3])
    ds.map(lambda x: x + 1).print()
    graph = build_job_graph(env)
    src = by_name(graph, "Source: Collection Source")
    assert src.parallelism == 1
    assert edge_kinds(graph) == [("Source: Collection Source", "Map -> Sink: Print to Std. Out", "rebalance")]
    with pytest.raises(ValueError, match="non parallel"):
        env.from_collection([1]).set_parallelism(2)


def test_explicit_partitioners_keep_vertices_apart_even_at_equal_parallelism() -> None:
    for method, kind in [
        ("rebalance", "rebalance"),
        ("rescale", "rescale"),
        ("shuffle", "shuffle"),
        ("broadcast", "broadcast"),
        ("global_", "global"),
    ]:
        env = env_with(2)
        ds = env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src")
        getattr(ds, method)().map(lambda x: x).print()
        graph = build_job_graph(env)
        assert edge_kinds(graph) == [("Source: src", "Map -> Sink: Print to Std. Out", kind)], method


def test_explicit_forward_chains_and_refuses_a_parallelism_change() -> None:
    env = env_with(2)
    env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src").forward().map(
        lambda x: x
    ).print()
    assert [v.name for v in build_job_graph(env).vertices] == [
        "Source: src -> Map -> Sink: Print to Std. Out"
    ]

    env = env_with(2)
    ds = env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src")
    ds.forward().map(lambda x: x).set_parallelism(3).print()
    with pytest.raises(
        InvalidJobGraphError, match="Forward partitioning does not allow change of parallelism"
    ):
        build_job_graph(env)


def test_partitioning_nearest_to_the_consumer_wins() -> None:
    env = env_with(2)
    env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src").rebalance().shuffle().print()
    assert [k for _, _, k in edge_kinds(build_job_graph(env))] == ["shuffle"]


def test_union_gives_the_consumer_one_edge_per_input_with_its_own_partitioning() -> None:
    env = env_with(2)
    a = env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "a")
    b = env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "b")
    c = env.from_collection([1, 2])
    a.union(b.rebalance(), c).map(lambda x: x).print()
    graph = build_job_graph(env)
    assert sorted(edge_kinds(graph)) == [
        ("Source: Collection Source", "Map -> Sink: Print to Std. Out", "rebalance"),
        ("Source: a", "Map -> Sink: Print to Std. Out", "forward"),
        ("Source: b", "Map -> Sink: Print to Std. Out", "rebalance"),
    ]
    assert all(e.target_input == 0 for e in graph.edges)
    assert len({e.id for e in graph.edges}) == 3


def test_an_operator_with_two_consumers_is_not_chained_to_either() -> None:
    env = env_with(2)
    ds = env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src").map(lambda x: x)
    ds.filter(lambda x: True).print()
    ds.print("second")
    graph = build_job_graph(env)
    assert sorted(edge_kinds(graph)) == [
        ("Source: src -> Map", "Filter -> Sink: Print to Std. Out", "forward"),
        ("Source: src -> Map", "Sink: Print to Std. Out", "forward"),
    ]


def test_disable_chaining_start_new_chain_and_slot_sharing_groups_break_chains() -> None:
    env = env_with(2)
    src = env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src")
    src.map(lambda x: x).disable_chaining().filter(lambda x: True).print()
    assert sorted(v.name for v in build_job_graph(env).vertices) == [
        "Filter -> Sink: Print to Std. Out",
        "Map",
        "Source: src",
    ]

    env = env_with(2)
    src = env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src")
    src.map(lambda x: x).filter(lambda x: True).start_new_chain().print()
    assert sorted(v.name for v in build_job_graph(env).vertices) == [
        "Filter -> Sink: Print to Std. Out",
        "Source: src -> Map",
    ]

    env = env_with(2)
    src = env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src")
    src.map(lambda x: x).slot_sharing_group("other").filter(lambda x: True).print()
    graph = build_job_graph(env)
    assert sorted(v.name for v in graph.vertices) == [
        "Map -> Filter -> Sink: Print to Std. Out",
        "Source: src",
    ]

    env = env_with(2)
    env.disable_operator_chaining()
    env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src").map(lambda x: x).print()
    assert len(build_job_graph(env).vertices) == 3


def test_sink_disable_chaining_and_sink_parallelism() -> None:
    env = env_with(2)
    ds = env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src").map(lambda x: x)
    ds.sink_to(StandInSink()).name("out").set_parallelism(1)
    graph = build_job_graph(env)
    assert edge_kinds(graph) == [("Source: src -> Map", "Sink: out", "rebalance")]
    env = env_with(2)
    ds = env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src")
    ds.print().disable_chaining()
    assert edge_kinds(build_job_graph(env)) == [("Source: src", "Sink: Print to Std. Out", "forward")]


# --------------------------------------------------------------------------- names, kinds, config


def test_operator_kinds_names_and_config() -> None:
    from flott.datastream.functions import KeyedProcessFunction, ProcessFunction

    class P(ProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Any:
            yield value

    class KP(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Any:
            yield value

    env = env_with(1)
    ds = env.from_collection([(1, 2)], type_info=Types.TUPLE([Types.INT(), Types.INT()]))
    keyed = ds.process(P(), output_type=ds.get_type()).key_by(lambda t: t[0])
    keyed.sum(1).print()
    keyed.min("f1").print()
    keyed.max_by(0).name("biggest").print()
    keyed.process(KP(), output_type=Types.STRING()).print()
    keyed.map(lambda t: t).print()
    graph = build_job_graph(env)
    ops = {op.name: op for v in graph.vertices for op in v.operators}
    assert ops["PROCESS"].kind == "process" and ops["PROCESS"].key_selector is None
    aggregations = [op for v in graph.vertices for op in v.operators if op.name == "Reduce"]
    assert sorted((op.kind, str(op.config["field"])) for op in aggregations) == [("min", "f1"), ("sum", "1")]
    assert ops["biggest"].kind == "max_by" and ops["biggest"].config == {"field": 0}
    assert ops["KEYED PROCESS"].kind == "keyed_process"
    for op in [*aggregations, ops["biggest"], ops["KEYED PROCESS"], ops["Map"]]:
        assert op.key_selector is not None, f"{op.name} runs keyed"
        assert op.function is not None or op.kind in ("sum", "min", "max", "min_by", "max_by")
    assert ops["KEYED PROCESS"].output_type is not None
    assert ops["biggest"].output_type == ops["biggest"].input_type is not None
    print_function = ops["Sink: Print to Std. Out"].function
    assert print_function is not None
    printed = cloudpickle.loads(graph.user_artifacts[print_function])
    assert type(printed).__name__ == "PrintSink"


def test_print_sink_identifier_and_add_source_add_sink() -> None:
    from flott.datastream.connectors.source_function import SinkFunction, SourceFunction

    class Numbers(SourceFunction):
        def run(self, ctx: Any) -> None:
            for i in range(3):
                ctx.collect(i)

        def cancel(self) -> None:
            pass

    class Collect(SinkFunction):
        def invoke(self, value: Any, context: Any) -> None:
            pass

    env = env_with(2)
    ds = env.add_source(Numbers())
    ds.add_sink(Collect())
    ds.print("tag")
    graph = build_job_graph(env)
    assert sorted(edge_kinds(graph)) == [
        ("Source: Custom Source", "Sink: Print to Std. Out", "rebalance"),
        ("Source: Custom Source", "Sink: Unnamed", "rebalance"),
    ]
    assert by_name(graph, "Source: Custom Source").parallelism == 1
    assert graph.config["execution.runtime-mode"] == "STREAMING"


def test_runtime_mode_resolution() -> None:
    env = env_with(1)
    env.set_runtime_mode(RuntimeExecutionMode.AUTOMATIC)
    env.from_collection([1]).print()
    assert build_job_graph(env).config["execution.runtime-mode"] == "BATCH"

    env = env_with(1)
    env.set_runtime_mode(RuntimeExecutionMode.AUTOMATIC)
    env.from_source(StandInSource(bounded=False), WatermarkStrategy.no_watermarks(), "u").print()
    assert build_job_graph(env).config["execution.runtime-mode"] == "STREAMING"

    env = env_with(1)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.from_source(StandInSource(bounded=False), WatermarkStrategy.no_watermarks(), "u").print()
    with pytest.raises(InvalidJobGraphError, match="UNBOUNDED source"):
        build_job_graph(env)


def test_job_config_carries_settings_and_user_configuration() -> None:
    from flott.common import Configuration

    config = Configuration()
    config.set_string("my.key", "my value")
    config.set_string("execution.savepoint.path", "/tmp/sp-1")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    env.set_buffer_timeout(5)
    env.get_config().set_global_job_parameters({"threshold": "3"})
    env.enable_checkpointing(1000)
    env.from_collection([1]).print()
    graph = build_job_graph(env, "configured")
    assert graph.config["my.key"] == "my value"
    assert graph.config["execution.buffer-timeout"] == "5"
    assert graph.config["pipeline.global-job-parameters"] == "threshold:3"
    assert graph.config["execution.checkpointing.interval"] == "1000"
    assert graph.config["parallelism.default"] == "1"
    assert graph.savepoint_path == "/tmp/sp-1"
    assert graph.allow_non_restored_state is False
    assert all(isinstance(v, str) for v in graph.config.values())


def test_default_job_name_and_parallelism_from_configuration() -> None:
    env = StreamExecutionEnvironment.get_execution_environment({"parallelism.default": "3"})
    env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src").print()
    graph = build_job_graph(env)
    assert graph.job_name == "Flink Streaming Job"
    assert [v.parallelism for v in graph.vertices] == [3]


def test_max_parallelism_settings() -> None:
    env = env_with(2)
    env.set_max_parallelism(16)
    ds = env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src")
    ds.key_by(lambda x: x).reduce(lambda a, b: a).set_max_parallelism(8).print()
    graph = build_job_graph(env)
    assert sorted(v.max_parallelism for v in graph.vertices) == [8, 16]

    env = env_with(4)
    env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src").set_max_parallelism(2).print()
    with pytest.raises(InvalidJobGraphError, match="maximum parallelism"):
        build_job_graph(env)


def test_no_operators_is_an_error() -> None:
    env = env_with(1)
    env.from_collection([1])
    with pytest.raises(InvalidJobGraphError, match="No operators defined"):
        build_job_graph(env)


def test_unpicklable_function_is_reported_with_the_operator_name() -> None:
    import threading

    lock = threading.Lock()
    env = env_with(1)
    env.from_collection([1]).map(lambda x: (lock, x)).name("Locked").print()
    with pytest.raises(InvalidJobGraphError, match="operator 'Locked' cannot be pickled"):
        build_job_graph(env)


def test_execution_plan_is_flink_shaped_json() -> None:
    import json

    env = env_with(2)
    env.from_collection([1]).map(lambda x: x).print()
    plan = json.loads(env.get_execution_plan())
    assert [(n["id"], n["type"], n["pact"], n["parallelism"]) for n in plan["nodes"]] == [
        (1, "Source: Collection Source", "Data Source", 1),
        (2, "Map", "Operator", 2),
        (3, "Sink: Print to Std. Out", "Data Sink", 2),
    ]
    assert plan["nodes"][1]["predecessors"] == [{"id": 1, "ship_strategy": "REBALANCE", "side": "second"}]
    assert plan["nodes"][2]["predecessors"][0]["ship_strategy"] == "FORWARD"
    assert len(env.transformations) == 2, "get_execution_plan keeps the program"


# --------------------------------------------------------------------------- ids


def stateful_program(env: StreamExecutionEnvironment, with_uids: bool) -> None:
    ds = env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src")
    mapped = ds.map(lambda x: (x, 1))
    reduced = mapped.key_by(lambda t: t[0]).reduce(lambda a, b: (a[0], a[1] + b[1]))
    sink = reduced.print()
    if with_uids:
        ds.uid("source")
        mapped.uid("to-pairs")
        reduced.uid("count")
        sink.uid("print")


def test_ids_are_stable_across_builds_and_derived_from_uids() -> None:
    graphs = []
    for _ in range(2):
        env = env_with(2)
        stateful_program(env, with_uids=True)
        graphs.append(build_job_graph(env))
    first, second = graphs
    assert first.job_id != second.job_id
    assert [v.id for v in first.vertices] == [v.id for v in second.vertices]
    assert [e.id for e in first.edges] == [e.id for e in second.edges]
    ops = {op.uid: op.operator_id for v in first.vertices for op in v.operators}
    assert ops == {
        uid: hashlib.md5(uid.encode()).hexdigest() for uid in ["source", "to-pairs", "count", "print"]
    }
    for v in first.vertices:
        assert v.id == v.operators[0].operator_id


def test_positional_ids_are_stable_too_and_differ_per_operator() -> None:
    ids = []
    for _ in range(2):
        env = env_with(2)
        stateful_program(env, with_uids=False)
        ids.append([op.operator_id for v in build_job_graph(env).vertices for op in v.operators])
    assert ids[0] == ids[1]
    assert len(set(ids[0])) == len(ids[0]) == 4
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids[0])


def test_uid_hash_duplicate_uid_and_disabled_auto_uids() -> None:
    env = env_with(1)
    env.from_collection([1]).map(lambda x: x).set_uid_hash("A" * 32).print()
    ops = [op for v in build_job_graph(env).vertices for op in v.operators]
    assert "a" * 32 in {op.operator_id for op in ops}

    env = env_with(1)
    env.from_collection([1]).map(lambda x: x).uid("same").print().uid("same")
    with pytest.raises(InvalidJobGraphError, match='Hash collision on user-specified ID "same"'):
        build_job_graph(env)

    env = env_with(1)
    env.get_config().disable_auto_generated_uids()
    env.from_collection([1]).uid("src").map(lambda x: x).print().uid("sink")
    with pytest.raises(InvalidJobGraphError, match="no UID or hash has been assigned to operator Map"):
        build_job_graph(env)


def test_missing_uid_warning_only_for_stateful_jobs() -> None:
    env = env_with(2)
    stateful_program(env, with_uids=False)
    with pytest.warns(MissingUidWarning, match="Reduce"):
        build_job_graph(env)

    env = env_with(2)
    stateful_program(env, with_uids=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingUidWarning)
        build_job_graph(env)

    env = env_with(2)
    env.from_collection([1]).map(lambda x: x).print()
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingUidWarning)
        build_job_graph(env)


def test_missing_uid_warning_names_only_operators_that_hold_state() -> None:
    # Stateful operators all have uids; the stateless collection source, keyed lambda map and
    # print sink have none and need none: no warning (before, sources and sinks were named).
    env = env_with(2)
    keyed = env.from_collection([("a", 1), ("b", 2)]).key_by(lambda t: t[0])
    keyed.reduce(lambda a, b: (a[0], a[1] + b[1])).uid("sums").print()
    keyed.map(lambda t: t).print()
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingUidWarning)
        build_job_graph(env)

    env = env_with(2)
    env.from_collection([("a", 1)]).key_by(lambda t: t[0]).reduce(lambda a, b: a).print()
    with pytest.warns(MissingUidWarning) as caught:
        build_job_graph(env)
    message = str(caught[0].message)
    assert "no uid: Reduce." in message
    assert "Collection Source" not in message and "Print" not in message
