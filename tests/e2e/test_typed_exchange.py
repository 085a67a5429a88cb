"""A typed keyed job on real TaskExecutors: records of a declared output type cross the exchange in
their schema-driven encoding (record_codec.py) and the keyed function downstream receives exactly
what it received when they were pickled (values and classes), in STREAMING and BATCH mode."""

from __future__ import annotations

from typing import Any

import pytest

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Types
from flott.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from flott.datastream.functions import KeyedProcessFunction

RECORD = Types.TUPLE(
    [Types.STRING(), Types.LONG(), Types.TUPLE([Types.BOOLEAN(), Types.DOUBLE()]), Types.INT()]
)


def record(i: int) -> tuple[str, int, tuple[bool, float], int]:
    return (f"k{i % 5}", i * (1 << 40), (i % 2 == 0, i / 4), -i)


def shape(value: Any) -> str:
    """The classes of a value, as the receiving function sees them."""
    if type(value) is tuple:
        return "(" + ",".join(shape(v) for v in value) + ")"
    return type(value).__name__


class Describe(KeyedProcessFunction):
    def process_element(self, value, ctx):  # type: ignore[no-untyped-def]
        yield ctx.get_current_key(), shape(value), value


@pytest.mark.parametrize("mode", [RuntimeExecutionMode.STREAMING, RuntimeExecutionMode.BATCH])
def test_typed_keyed_job_receives_what_pickle_delivered(
    embedded: EmbeddedExecutor, mode: RuntimeExecutionMode
) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.set_runtime_mode(mode)
    n = 2000
    results = list(
        env.from_collection(list(range(n)), type_info=Types.INT())
        .map(record, output_type=RECORD)
        .key_by(lambda r: r[0], key_type=Types.STRING())
        .process(Describe())
        .uid("describe")
        .execute_and_collect()
    )
    cluster = embedded.last_cluster
    assert cluster is not None and cluster.num_task_managers >= 2, "records must cross TaskExecutors"
    expected = sorted((f"k{i % 5}", "(str,int,(bool,float),int)", record(i)) for i in range(n))
    assert sorted(results) == expected
