"""Declared output types are checked where PyFlink's fused Python operators end, not where flott's
tasks end: the JobGraph says so per operator (checked on PyFlink 2.3 by the corpus program
output_type_fusion_boundaries; these tests pin the plan without processes)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from flott.common import Configuration, Types, WatermarkStrategy
from flott.common.watermark_strategy import TimestampAssigner
from flott.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from flott.errors import ConfigurationError
from flott.graph import build_job_graph
from flott.graph.python_operator_fusion import PYTHON_OPERATOR_CHAINING
from flott.runtime.jobgraph import JobGraph, OperatorDescriptor
from flott.runtime.tasks.record_writer import CHECK_INPUT, UNCHECKED_OUTPUT


def _env(*, chaining: bool = True, python_chaining: str | None = None) -> StreamExecutionEnvironment:
    config = Configuration()
    if python_chaining is not None:
        config.set_string(PYTHON_OPERATOR_CHAINING, python_chaining)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    if not chaining:
        env.disable_operator_chaining()
    return env


def _graph(env: StreamExecutionEnvironment) -> JobGraph:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_job_graph(env, "fusion")


def _ops(graph: JobGraph, name: str) -> list[OperatorDescriptor]:
    return [op for v in graph.vertices for op in v.operators if op.name == name]


def _typed_map(env: StreamExecutionEnvironment) -> Any:
    return env.from_collection(["x"]).map(lambda _: 2.7, output_type=Types.INT()).name("typed")


def test_without_chaining_a_fused_consumer_leaves_the_output_unchecked() -> None:
    env = _env(chaining=False)
    _typed_map(env).map(str).name("next").print()
    graph = _graph(env)
    [typed] = _ops(graph, "typed")
    [following] = _ops(graph, "next")
    assert len(graph.vertices) == 4  # every operator a task of its own
    assert typed.config.get(UNCHECKED_OUTPUT) is True  # PyFlink fuses map -> map
    assert not following.config.get(UNCHECKED_OUTPUT)  # print() is Java: checked
    assert not any(op.config.get(CHECK_INPUT) for v in graph.vertices for op in v.operators)


def test_without_chaining_shuffles_and_second_consumers_stay_checked() -> None:
    env = _env(chaining=False)
    shared = _typed_map(env)
    shared.map(str).print()
    shared.map(repr).print()
    _typed_map(env).name("keyed").key_by(lambda v: 0).map(str).print()
    _typed_map(env).name("new chain").map(str).start_new_chain().print()
    graph = _graph(env)
    for name in ("typed", "keyed", "new chain"):
        [op] = _ops(graph, name)
        assert not op.config.get(UNCHECKED_OUTPUT), name


def test_chained_watermark_assigner_checks_what_the_map_emitted() -> None:
    env = _env()
    _typed_map(env).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(_Millis())
    ).map(str).print()
    graph = _graph(env)
    [vertex] = [v for v in graph.vertices if any(op.name == "typed" for op in v.operators)]
    kinds = [op.kind for op in vertex.operators]
    assert "timestamps_watermarks" in kinds  # chained in flott, not fused in PyFlink
    watermarks = vertex.operators[kinds.index("timestamps_watermarks")]
    spec = watermarks.config[CHECK_INPUT]
    assert spec["producer"] == "typed" and spec["keyed"] is False
    assert spec["type"] == _ops(graph, "typed")[0].output_type
    after = vertex.operators[kinds.index("timestamps_watermarks") + 1]
    assert CHECK_INPUT in after.config  # the assigner's output leaves Python again


def test_chained_python_functions_are_not_checked_between_them() -> None:
    env = _env()
    _typed_map(env).filter(lambda v: True).flat_map(lambda v: [v]).map(str).print()
    graph = _graph(env)
    assert not any(op.config.get(CHECK_INPUT) for v in graph.vertices for op in v.operators)


def test_python_operator_chaining_off_checks_every_operator() -> None:
    env = _env(chaining=False, python_chaining="false")
    _typed_map(env).map(str).print()
    [typed] = _ops(_graph(env), "typed")
    assert not typed.config.get(UNCHECKED_OUTPUT)


def test_a_bad_python_operator_chaining_value_is_a_config_error() -> None:
    env = _env(python_chaining="sometimes")
    _typed_map(env).map(str).print()
    with pytest.raises(ConfigurationError, match=PYTHON_OPERATOR_CHAINING):
        _graph(env)


def test_batch_combiner_checks_its_input_not_its_partial_results() -> None:
    env = _env()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(2)
    env.from_collection(["a b"]).flat_map(
        lambda line: [(w, 1) for w in line.split()], output_type=Types.TUPLE([Types.STRING(), Types.INT()])
    ).name("words").key_by(lambda t: t[0]).reduce(lambda a, b: (a[0], a[1] + b[1])).print()
    graph = _graph(env)
    [edge] = [e for e in graph.edges if e.partitioner.kind == "hash"]
    combiner = graph.vertex(edge.source).operators[-1]
    [words] = _ops(graph, "words")
    assert combiner.config[UNCHECKED_OUTPUT] is True
    assert combiner.config[CHECK_INPUT] == {"type": words.output_type, "producer": "words", "keyed": True}


class _Millis(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return 1
