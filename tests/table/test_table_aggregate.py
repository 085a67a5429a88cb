"""flat_aggregate with a Python TableAggregateFunction: a key's rows withdrawn and emitted again per
change (streaming mode; batch is refused as Flink's planner refuses it); what it cannot take is refused."""

from __future__ import annotations

from typing import Any

import pytest

from flott.common.types import Row
from flott.errors import NotYetSupportedError, TableError, TableValidationError
from flott.table import DataTypes, EnvironmentSettings, TableEnvironment
from flott.table.expressions import col
from flott.table.udf import TableAggregateFunction, udf, udtaf

pytestmark = pytest.mark.processes  # collect() runs the job on a local cluster


class Top2(TableAggregateFunction):
    def emit_value(self, accumulator: Any) -> Any:
        for i, v in enumerate(accumulator):
            if v is not None:
                yield Row(v, i + 1)

    def create_accumulator(self) -> Any:
        return [None, None]

    def accumulate(self, accumulator: Any, value: Any) -> None:
        if accumulator[0] is None or value > accumulator[0]:
            accumulator[1], accumulator[0] = accumulator[0], value
        elif accumulator[1] is None or value > accumulator[1]:
            accumulator[1] = value

    def get_result_type(self) -> Any:
        return DataTypes.ROW(
            [DataTypes.FIELD("v", DataTypes.BIGINT()), DataTypes.FIELD("rank", DataTypes.INT())]
        )


def _rows(table: Any) -> list[tuple[Any, ...]]:
    with table.execute().collect() as rows:
        return [(r.get_row_kind().short_string(), *tuple(r)) for r in rows]


def test_batch_flat_aggregate_is_refused_as_flinks_batch_planner_refuses_it() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t = env.from_elements([("a", 3), ("b", 5), ("a", 7), ("a", 1)], ["k", "x"])
    top2 = udtaf(Top2())
    out = t.group_by(col("k")).flat_aggregate(top2(col("x"))).select(col("k"), col("v"), col("rank"))
    with pytest.raises(TableError, match="Cannot generate a valid execution plan"):
        out.execute()


def test_streaming_flat_aggregate_withdraws_the_previous_rows_of_a_key_before_emitting_new_ones() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "1")
    t = env.from_elements([(3,), (7,)], ["x"])
    out = t.flat_aggregate(udtaf(Top2())(col("x")).alias("best", "place")).select(col("best"), col("place"))
    assert _rows(out) == [("+I", 3, 1), ("-D", 3, 1), ("+I", 7, 1), ("+I", 3, 2)]


def test_what_flat_aggregate_does_not_take_is_refused() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t = env.from_elements([("a", 3)], ["k", "x"])
    with pytest.raises(TableValidationError, match="Only a table aggregate function can be used"):
        t.group_by(col("k")).flat_aggregate(udf(lambda x: x, result_type=DataTypes.BIGINT())(col("x")))
    with pytest.raises(NotYetSupportedError, match="taking the whole row"):
        t.group_by(col("k")).flat_aggregate(udtaf(Top2()))
    with pytest.raises(TableValidationError, match="alias list has 1 columns"):
        t.flat_aggregate(udtaf(Top2())(col("x")).alias("a"))
    with pytest.raises(TypeError, match="TableAggregateFunction instance"):
        udtaf(lambda acc: acc)
    updating = t.group_by(col("k")).select(col("k"), col("x").sum.alias("x"))
    with pytest.raises(TableError, match=r"Top2 .*Method retract is not implemented"):
        updating.flat_aggregate(udtaf(Top2())(col("x"))).select(col("v")).execute()
