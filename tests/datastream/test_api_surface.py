"""The DataStream API mirrors PyFlink's names; later-issue features raise NotYetSupportedError."""

from __future__ import annotations

import importlib
import re
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from flott.common import Types, WatermarkStrategy
from flott.datastream import (
    DataStream,
    KeyedStream,
    StreamExecutionEnvironment,
)
from flott.datastream.connectors.base import Boundedness
from flott.errors import NotYetSupportedError
from flott.graph import MissingUidWarning

REFERENCE = Path("/work/shared/reference/pyflink-datastream-api.txt")


@pytest.fixture(autouse=True)
def _quiet_uid_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingUidWarning)
        yield


class StandInSource:
    def get_boundedness(self) -> Boundedness:
        return Boundedness.BOUNDED

    def create_reader(self, subtask_index: int, parallelism: int) -> Any:
        raise AssertionError("not read")


def stream(parallelism: int = 2) -> DataStream:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    return env.from_source(StandInSource(), WatermarkStrategy.no_watermarks(), "src")


def reference_sections() -> dict[str, dict[str, set[str]]]:
    """``{module: {class: {methods}}}`` of the PyFlink reference listing."""
    sections: dict[str, dict[str, set[str]]] = {}
    module = cls = None
    for line in REFERENCE.read_text().splitlines():
        if line.startswith("## "):
            module, cls = line[3:].strip(), None
            sections[module] = {}
        elif module and line.startswith("class "):
            cls = re.match(r"class (\w+)", line).group(1)  # type: ignore[union-attr]
            sections[module][cls] = set()
        elif module and cls and line.startswith("    class "):
            sections[module][cls].add(line.split()[1])
        elif module and cls and line.startswith("    "):
            name = re.match(r"\s+(?:static |classmethod )?(\w+)\(", line)
            if name:
                sections[module][cls].add(name.group(1))
    return sections


SECTIONS = [
    "pyflink.datastream",
    "pyflink.datastream.functions",
    "pyflink.datastream.state",
    "pyflink.datastream.window",
    "pyflink.datastream.output_tag",
    "pyflink.datastream.checkpoint_config",
    "pyflink.datastream.state_backend",
]
# Classes of those sections that PyFlink re-exports from pyflink.common (owned by flott.common).
FROM_COMMON = {"TypeInformation", "Types", "RowTypeInfo"}
JVM_ONLY_METHODS = {
    "get_java_type_info",
    "get_java_output_tag",
    "get_java_slot_sharing_group",
    "get_java_memory_size",
}


@pytest.mark.parametrize("section", SECTIONS)
def test_every_class_and_method_of_the_reference_exists(section: str) -> None:
    module = importlib.import_module(section.replace("pyflink", "flott", 1))
    missing = []
    for cls_name, methods in reference_sections()[section].items():
        if cls_name in FROM_COMMON:
            continue
        cls = getattr(module, cls_name, None)
        if cls is None:
            missing.append(cls_name)
            continue
        for method in methods - JVM_ONLY_METHODS - {"__init__"}:
            if not hasattr(cls, method):
                missing.append(f"{cls_name}.{method}")
    assert not missing, f"{section}: missing {missing}"


def test_pyflink_1x_environment_methods_exist() -> None:
    for name in [
        "read_text_file",
        "add_source",
        "set_state_backend",
        "get_state_backend",
        "set_restart_strategy",
        "get_restart_strategy",
        "get_job_graph",
    ]:
        assert callable(getattr(StreamExecutionEnvironment, name)), name


# --------------------------------------------------------------------------- later issues


def keyed() -> KeyedStream:
    return stream().key_by(lambda x: x)


NOT_YET: list[tuple[str, Callable[[], Any], str]] = [
    ("DataStream.iterate", lambda: stream().iterate(), "iterations"),
    (
        "StreamExecutionEnvironment.create_input",
        lambda: StreamExecutionEnvironment.get_execution_environment().create_input(object()),
        "InputFormat",
    ),
]


@pytest.mark.parametrize(("call", "action", "feature"), NOT_YET, ids=[c for c, _, _ in NOT_YET])
def test_later_issue_features_raise_not_yet_supported_naming_the_feature(
    call: str, action: Callable[[], Any], feature: str
) -> None:
    with pytest.raises(NotYetSupportedError) as info:
        action()
    assert feature in str(info.value)
    assert isinstance(info.value, NotImplementedError)


def test_custom_java_backends_are_not_supported() -> None:
    from flott.datastream import CustomCheckpointStorage, CustomStateBackend

    with pytest.raises(NotYetSupportedError, match="state backends"):
        CustomStateBackend()
    with pytest.raises(NotYetSupportedError, match="checkpoint storages"):
        CustomCheckpointStorage()


# --------------------------------------------------------------------------- what PyFlink refuses


def test_keyed_stream_refuses_operator_properties_and_repartitioning() -> None:
    k = keyed()
    for call in [
        lambda: k.name("x"),
        lambda: k.uid("x"),
        lambda: k.set_parallelism(2),
        lambda: k.slot_sharing_group("g"),
        lambda: k.disable_chaining(),
        lambda: k.set_max_parallelism(4),
    ]:
        with pytest.raises(ValueError, match="for KeyedStream is not supported"):
            call()
    for call in [k.rebalance, k.rescale, k.shuffle, k.forward, k.broadcast, k.global_]:
        with pytest.raises(ValueError, match="Cannot override partitioning for KeyedStream"):
            call()


def test_partitioned_and_union_streams_have_no_operator_properties() -> None:
    with pytest.raises(ValueError, match="rebalance partitioning is not an operator"):
        stream().rebalance().set_parallelism(3)
    with pytest.raises(ValueError, match="union"):
        stream().union(stream()).name("u")


def test_function_arguments_are_checked_like_pyflink() -> None:
    from flott.datastream.functions import KeyedProcessFunction, MapFunction

    class Double(MapFunction):
        def map(self, value: Any) -> Any:
            return value * 2

    class KP(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Any:
            yield value

    ds = stream()
    ds.map(Double())
    ds.map(lambda x: x)
    with pytest.raises(TypeError, match="MapFunction or a callable"):
        ds.map(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="KeySelector or a callable"):
        ds.key_by("field")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"key_by first"):
        ds.process(KP())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="KeyedProcessFunction is required"):
        ds.key_by(lambda x: x).process(lambda x: x)
    with pytest.raises(TypeError):
        ds.key_by(lambda x: x).sum(1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="32 character"):
        ds.set_uid_hash("xyz")


def test_union_of_different_declared_types_is_refused() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    a = env.from_collection([1], type_info=Types.INT())
    b = env.from_collection(["x"], type_info=Types.STRING())
    with pytest.raises(ValueError, match="different types"):
        a.union(b)
    a.union(env.from_collection([2]))  # undeclared: allowed


# --------------------------------------------------------------------------- stream properties


def test_names_types_and_uids_are_recorded() -> None:
    ds = stream()
    assert ds.get_name() == "src"
    assert ds.get_type() == Types.PICKLED_BYTE_ARRAY()
    mapped = ds.map(lambda x: x, output_type=Types.INT()).name("Square").uid("square").set_description("d")
    assert mapped.get_name() == "Square"
    assert mapped.get_type() == Types.INT()
    assert mapped.filter(lambda x: True).get_type() == Types.INT()
    k = mapped.key_by(lambda x: x)
    assert k.get_type() == Types.INT() and k.get_name() == "Square"
    assert k.reduce(lambda a, b: a).get_type() == Types.INT()
    assert k.key_by(lambda x: -x).get_name() == "Square"
    assert getattr(ds, "global")().transformation.partitioner == "global"  # type: ignore[attr-defined]


def test_project_selects_tuple_fields() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    ds = env.from_collection(
        [(1, "a", 2.0)], type_info=Types.TUPLE([Types.INT(), Types.STRING(), Types.DOUBLE()])
    )
    projected = ds.project(2, 0)
    assert projected.get_type() == Types.TUPLE([Types.DOUBLE(), Types.INT()])
    assert projected.transformation.function((1, "a", 2.0)) == (2.0, 1)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="Only Tuple DataStreams can be projected"):
        env.from_collection([1]).project(0)


# --------------------------------------------------------------------------- the environment


def test_environment_settings() -> None:
    from flott.datastream import CheckpointingMode, HashMapStateBackend, RuntimeExecutionMode

    env = StreamExecutionEnvironment.get_execution_environment()
    assert env.get_parallelism() >= 1
    assert env.get_max_parallelism() == 128
    env.set_parallelism(3).set_max_parallelism(64)
    assert (env.get_parallelism(), env.get_max_parallelism()) == (3, 64)
    assert env.get_config().get_parallelism() == 3
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    assert env.configuration["execution.runtime-mode"] == "BATCH"
    assert env.get_buffer_timeout() == 100
    env.set_buffer_timeout(-1)
    assert env.get_buffer_timeout() == -1
    assert env.is_chaining_enabled()
    env.disable_operator_chaining()
    assert not env.is_chaining_enabled()

    env.enable_checkpointing(5000, CheckpointingMode.AT_LEAST_ONCE)
    cc = env.get_checkpoint_config()
    assert cc.is_checkpointing_enabled() and cc.get_checkpoint_interval() == 5000
    assert env.get_checkpointing_mode() is CheckpointingMode.AT_LEAST_ONCE
    cc.set_min_pause_between_checkpoints(100).set_max_concurrent_checkpoints(2)
    assert env.configuration["execution.checkpointing.min-pause"] == "100"
    assert env.configuration["execution.checkpointing.mode"] == "AT_LEAST_ONCE"

    env.set_state_backend(HashMapStateBackend())
    assert env.configuration["state.backend.type"] == "hashmap"
    assert isinstance(env.get_state_backend(), HashMapStateBackend)


def test_restart_strategy_is_stored_as_configuration() -> None:
    from flott.common import RestartStrategies

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(3, 1000))
    assert env.configuration["restart-strategy.type"] == "fixed-delay"
    assert env.configuration["restart-strategy.fixed-delay.attempts"] == "3"
    env.set_restart_strategy(RestartStrategies.no_restart())
    assert env.configuration["restart-strategy.type"] == "none"
    assert "restart-strategy.fixed-delay.attempts" not in env.configuration
    assert env.get_restart_strategy() == RestartStrategies.no_restart()


def test_configure_and_context_configuration() -> None:
    from flott.api import execution
    from flott.configuration import Configuration

    execution.set_context_configuration(Configuration({"parallelism.default": "5"}))
    try:
        env = StreamExecutionEnvironment.get_execution_environment()
    finally:
        execution.set_context_configuration(None)
    assert env.get_parallelism() == 5
    env.configure({"parallelism.default": "2", "pipeline.global-job-parameters": "a:1,b:2", "x.y": "z"})
    assert env.get_parallelism() == 2
    assert env.get_config().get_global_job_parameters() == {"a": "1", "b": "2"}
    assert env.configuration["x.y"] == "z"


# --------------------------------------------------------------------------- execute


class FakeJobClient:
    def __init__(self, job_graph: Any) -> None:
        self.job_graph = job_graph

    def get_job_execution_result(self) -> Any:
        client = self

        class Done:
            def result(self) -> Any:
                return ("result of", client.job_graph.job_name)

        return Done()


class RecordingExecutor:
    def __init__(self) -> None:
        self.graphs: list[Any] = []

    def execute(self, job_graph: Any) -> Any:
        self.graphs.append(job_graph)
        return FakeJobClient(job_graph)


def test_execute_hands_the_job_graph_to_the_pipeline_executor_and_clears_the_program() -> None:
    from flott.client.pipeline_executor import use_executor

    executor = RecordingExecutor()
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection([1, 2]).map(lambda x: x).print()
    with use_executor(executor):
        assert env.execute("first") == ("result of", "first")
        assert env.transformations == []
        env.from_collection([3]).print()
        client = env.execute_async()
    assert isinstance(client, FakeJobClient)
    assert [g.job_name for g in executor.graphs] == ["first", "Flink Streaming Job"]
    assert [v.name for v in executor.graphs[0].vertices] == [
        "Source: Collection Source -> Map -> Sink: Print to Std. Out"
    ]
