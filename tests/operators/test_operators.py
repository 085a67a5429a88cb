"""Operators one at a time: semantics of each kind, built through the operator factory."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import pytest

from flott.common.types import Row
from flott.datastream.functions import (
    AggregateFunction,
    KeyedProcessFunction,
    MapFunction,
    ProcessFunction,
    ReduceFunction,
    RuntimeContext,
)
from flott.datastream.output_tag import OutputTag
from flott.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueState,
    ValueStateDescriptor,
)
from flott.errors import FlottError, InvalidJobGraphError, NotYetSupportedError
from flott.runtime.jobgraph import OperatorDescriptor
from flott.runtime.operators import OperatorSetup, StreamOperator
from flott.runtime.operators.aggregation import create_aggregator
from flott.runtime.tasks.operator_chain import OperatorChain
from flott.runtime.tasks.operator_factory import create_operator
from tests.operators.task_harness import Blobs, CollectionSource, make_env, op, vertex


def build(
    blobs: Blobs,
    descriptor: OperatorDescriptor,
    *,
    streaming: bool = True,
    config: dict[str, str] | None = None,
) -> StreamOperator:
    env = make_env(vertex("v", 1, descriptor), blobs, config=config)
    operator = create_operator(OperatorSetup(env, descriptor, streaming, 1024))
    operator.open()
    return operator


def run(operator: StreamOperator, *batches: list[Any]) -> list[Any]:
    out: list[Any] = []
    for batch in batches:
        out.extend(operator.process_batch(batch))
    out.extend(operator.end_input())
    operator.close()
    return out


def test_map_filter_flat_map_accept_lambdas_functions_and_function_objects() -> None:
    class Double:
        def map(self, value: int) -> int:
            return value * 2

    blobs = Blobs()
    assert run(build(blobs, op(blobs, "map", Double())), [1, 2], [3]) == [2, 4, 6]
    assert run(build(blobs, op(blobs, "map", str)), [1, 2]) == ["1", "2"]
    assert run(build(blobs, op(blobs, "filter", lambda x: x > 1)), [1, 2, 3]) == [2, 3]

    def gen(x: int) -> Any:
        yield from range(x)

    assert run(build(blobs, op(blobs, "flat_map", gen)), [0, 1, 2, 3]) == [0, 0, 1, 0, 1, 2]
    assert run(build(blobs, op(blobs, "flat_map", lambda s: s.split() or None)), ["a b", "", "c"]) == [
        "a",
        "b",
        "c",
    ]


def test_a_function_class_instead_of_an_instance_is_rejected() -> None:
    class Double:
        def map(self, value: int) -> int:
            return value * 2

    blobs = Blobs()
    with pytest.raises(InvalidJobGraphError, match="pass an instance"):
        build(blobs, op(blobs, "map", Double))


def test_unknown_kind_is_not_yet_supported() -> None:
    blobs = Blobs()
    with pytest.raises(NotYetSupportedError, match="window"):
        build(blobs, op(blobs, "window_reduce", lambda a, b: a))


LIFECYCLE_CALLS: list[str] = []


class Lifecycle(ProcessFunction):
    """Records its lifecycle in a module-level list: the task works on its own copy of the object."""

    def open(self, runtime_context: RuntimeContext) -> None:
        LIFECYCLE_CALLS.append(
            f"open {runtime_context.get_task_name()} {runtime_context.get_index_of_this_subtask()}"
        )
        self.param = runtime_context.get_job_parameter("threshold", "0")

    def process_element(self, value: int, ctx: ProcessFunction.Context) -> Any:
        assert ctx.timestamp() is None
        if value > int(self.param):
            yield value
            yield value * 10

    def close(self) -> None:
        LIFECYCLE_CALLS.append("close")


def test_process_function_yields_outputs_and_sees_its_runtime_context() -> None:
    blobs = Blobs()
    fn = Lifecycle()
    operator = build(
        blobs, op(blobs, "process", fn), config={"pipeline.global-job-parameters": "threshold:1,other:x"}
    )
    assert run(operator, [1, 2, 3]) == [2, 20, 3, 30]
    assert LIFECYCLE_CALLS == ["open v 0", "close"]


def test_process_function_cannot_use_keyed_state() -> None:
    class WantsState(ProcessFunction):
        def open(self, runtime_context: RuntimeContext) -> None:
            runtime_context.get_state(ValueStateDescriptor("s", None))

        def process_element(self, value: Any, ctx: ProcessFunction.Context) -> Any:
            yield value

    blobs = Blobs()
    with pytest.raises(FlottError, match="keyed stream"):
        build(blobs, op(blobs, "process", WantsState()))


def test_side_outputs_yielded_with_an_output_tag_do_not_leak_into_the_main_output() -> None:
    late = OutputTag("late")

    def split(value: int, ctx: Any) -> Any:
        if value < 0:
            yield late, value
        elif value == 0:
            yield ()
            yield "zero"
        else:
            yield value, "ok"

    blobs = Blobs()
    assert run(build(blobs, op(blobs, "process", split)), [1, -1, 2]) == [(1, "ok"), (2, "ok")]
    assert run(build(blobs, op(blobs, "process", split)), [0, -1, 1]) == [(), "zero", (1, "ok")]
    assert run(build(blobs, op(blobs, "process", split)), [1, 2]) == [(1, "ok"), (2, "ok")]


class AllStates(KeyedProcessFunction):
    """Touches every kind of keyed state; emits a summary per record."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.value = runtime_context.get_state(ValueStateDescriptor("v", None))
        self.items = runtime_context.get_list_state(ListStateDescriptor("l", None))
        self.seen = runtime_context.get_map_state(MapStateDescriptor("m", None, None))
        self.total = runtime_context.get_reducing_state(
            ReducingStateDescriptor("r", lambda a, b: a + b, None)
        )

        class Avg(AggregateFunction):
            def create_accumulator(self) -> Any:
                return (0, 0)

            def add(self, value: Any, accumulator: Any) -> Any:
                return accumulator[0] + value, accumulator[1] + 1

            def get_result(self, accumulator: Any) -> Any:
                return accumulator[0] / accumulator[1]

        self.avg = runtime_context.get_aggregating_state(AggregatingStateDescriptor("a", Avg(), None))

    def process_element(self, value: tuple[str, int], ctx: KeyedProcessFunction.Context) -> Any:
        assert isinstance(self.value, ValueState)
        self.value.update(value[1])
        self.items.add(value[1])
        self.seen.put(value[1], True)
        self.total.add(value[1])
        self.avg.add(value[1])
        yield (
            ctx.get_current_key(),
            self.items.get(),
            sorted(self.seen.keys()),
            self.total.get(),
            self.avg.get(),
        )


def test_keyed_process_state_is_scoped_to_the_current_key() -> None:
    blobs = Blobs()
    operator = build(blobs, op(blobs, "keyed_process", AllStates(), key=lambda r: r[0]))
    out = run(operator, [("a", 1), ("b", 10), ("a", 3)], [("b", 20)])
    assert out == [
        ("a", [1], [1], 1, 1.0),
        ("b", [10], [10], 10, 10.0),
        ("a", [1, 3], [1, 3], 4, 2.0),
        ("b", [10, 20], [10, 20], 30, 15.0),
    ]


class Concat(ReduceFunction):
    def reduce(self, value1: str, value2: str) -> str:
        return value1 + value2


@pytest.mark.parametrize("streaming", [True, False])
def test_reduce_streaming_emits_updates_batch_emits_finals(streaming: bool) -> None:
    blobs = Blobs()
    operator = build(blobs, op(blobs, "reduce", Concat(), key=lambda s: s[0]), streaming=streaming)
    out = run(operator, ["a1", "b1", "a2"], ["a3"])
    if streaming:
        assert out == ["a1", "b1", "a1a2", "a1a2a3"]
    else:
        assert out == ["a1a2a3", "b1"]


def test_unhashable_key_names_the_problem() -> None:
    blobs = Blobs()
    operator = build(blobs, op(blobs, "reduce", Concat(), key=lambda s: list(s)))
    with pytest.raises(TypeError, match="unhashable key of type list"):
        operator.process_batch(["ab"])


Point = namedtuple("Point", ["name", "x", "y"])


@pytest.mark.parametrize(
    ("kind", "field", "records", "expected"),
    [
        ("sum", 1, [("a", 1, 9), ("a", 2, 8), ("a", 3, 7)], [("a", 1, 9), ("a", 3, 9), ("a", 6, 9)]),
        ("sum", 0, [1, 2, 3], [1, 3, 6]),
        ("sum", 1, [["a", 1], ["a", 2]], [["a", 1], ["a", 3]]),
        ("sum", "x", [Point("p", 1, 0), Point("q", 2, 5)], [Point("p", 1, 0), Point("p", 3, 0)]),
        ("min", 1, [("a", 5, 1), ("b", 3, 2), ("c", 4, 3)], [("a", 5, 1), ("a", 3, 1), ("a", 3, 1)]),
        ("max", 1, [("a", 5, 1), ("b", 7, 2), ("c", 4, 3)], [("a", 5, 1), ("a", 7, 1), ("a", 7, 1)]),
        ("min_by", 1, [("a", 5), ("b", 3), ("c", 3), ("d", 4)], [("a", 5), ("b", 3), ("b", 3), ("b", 3)]),
        ("max_by", 1, [("a", 5), ("b", 7), ("c", 7), ("d", 4)], [("a", 5), ("b", 7), ("b", 7), ("b", 7)]),
        ("max", 0, [3, 9, 1], [3, 9, 9]),
    ],
)
def test_builtin_aggregations_follow_flink(
    kind: str, field: Any, records: list[Any], expected: list[Any]
) -> None:
    blobs = Blobs()
    operator = build(blobs, op(blobs, kind, key=lambda r: 0, config={"field": field}))
    assert run(operator, records) == expected


def test_sum_on_rows_by_name_copies_instead_of_mutating() -> None:
    blobs = Blobs()
    operator = build(blobs, op(blobs, "sum", key=lambda r: r["word"], config={"field": "count"}))
    first = Row(word="a", count=1)
    out = run(operator, [first, Row(word="a", count=2), Row(word="a", count=3)])
    assert [r["count"] for r in out] == [1, 3, 6]
    assert first["count"] == 1  # the record emitted first was not changed afterwards


def test_sum_on_basic_type_only_accepts_field_zero() -> None:
    agg = create_aggregator("sum", 1)
    with pytest.raises(TypeError, match="basic type"):
        agg.reduce(1, 2)


def test_keyed_operator_state_lands_in_its_backend_by_key_group() -> None:
    blobs = Blobs()
    operator = build(blobs, op(blobs, "sum", key=lambda r: r[0], config={"field": 1}))
    operator.process_batch([("a", 1), ("b", 2), ("a", 3)])
    backend = operator.backend  # type: ignore[attr-defined]
    split = backend.entries_by_key_group("_op_state")
    assert {k: v for group in split.values() for k, v in group.items()} == {"a": ("a", 4), "b": ("b", 2)}


class Numbering(MapFunction):
    """Numbers the records it sees: per-instance state that must not be shared."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.seen = 0

    def map(self, value: Any) -> Any:
        self.seen += 1
        return (*value, self.seen) if isinstance(value, tuple) else (value, self.seen)


def test_equal_function_objects_in_one_chain_do_not_share_state() -> None:
    """Blob ids are content addresses: two equal Numbering() objects are one blob, one cached object."""
    blobs = Blobs()
    first = op(blobs, "map", Numbering())
    second = OperatorDescriptor(operator_id="second", name="map2", kind="map", function=first.function)
    v = vertex("v", 1, op(blobs, "source", CollectionSource(["a", "b"])), first, second)
    chain = OperatorChain.build(make_env(v, blobs), streaming=True, batch_size=16)
    chain.open()
    assert chain.process(["a", "b"]) == [("a", 1, 1), ("b", 2, 2)]
    chain.close()
