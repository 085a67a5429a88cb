"""BATCH jobs pre-aggregate reduce/sum before the keyed shuffle; STREAMING jobs never do."""

from __future__ import annotations

import pytest

from flott.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from flott.graph import build_job_graph
from flott.graph.local_aggregation import LOCAL_PRE_AGGREGATION


def word_count_graph(mode: RuntimeExecutionMode, aggregate: str):  # type: ignore[no-untyped-def]
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.set_runtime_mode(mode)
    keyed = (
        env.from_collection(["a b", "b c"]).flat_map(str.split).map(lambda w: (w, 1)).key_by(lambda t: t[0])
    )
    out = keyed.reduce(lambda a, b: (a[0], a[1] + b[1])) if aggregate == "reduce" else keyed.sum(1)
    out.print()
    return build_job_graph(env, "wc")


@pytest.mark.parametrize("aggregate", ["reduce", "sum"])
def test_batch_adds_a_combiner_before_the_shuffle(aggregate: str) -> None:
    graph = word_count_graph(RuntimeExecutionMode.BATCH, aggregate)
    [edge] = [e for e in graph.edges if e.partitioner.kind == "hash"]
    producer, consumer = graph.vertex(edge.source), graph.vertex(edge.target)
    combiner = producer.operators[-1]
    assert combiner.config.get(LOCAL_PRE_AGGREGATION) is True
    assert combiner.kind == consumer.operators[0].kind
    assert combiner.function == consumer.operators[0].function
    assert combiner.key_selector == edge.partitioner.key_selector
    assert producer.name.endswith("-> Local " + consumer.operators[0].name)


def test_streaming_emits_every_update_so_no_combiner() -> None:
    graph = word_count_graph(RuntimeExecutionMode.STREAMING, "reduce")
    assert not any(op.config.get(LOCAL_PRE_AGGREGATION) for v in graph.vertices for op in v.operators)
