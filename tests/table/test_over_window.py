"""Table API over windows (Table.over_window): frames, naming, over calls in expressions, refusals.

The expected rows are the ones PyFlink 2.3 printed for the same programs (rows of one timestamp are
compared sorted: PyFlink's parallel datagen delivers them in either order).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from flott.errors import NotYetSupportedError, TableError, TableValidationError
from flott.table import EnvironmentSettings, Table, TableEnvironment
from flott.table.expression import Expression
from flott.table.expressions import (
    CURRENT_RANGE,
    CURRENT_ROW,
    UNBOUNDED_RANGE,
    UNBOUNDED_ROW,
    col,
    lit,
    row_interval,
)
from flott.table.over_window import OverWindowPartitionedOrdered
from flott.table.window import Over

pytestmark = pytest.mark.processes  # execute().collect() runs the job on a local cluster

DDL = """
    CREATE TABLE e (
        id BIGINT,
        k AS IF(id <= 3, 'a', 'b'),
        v AS CAST(id * 10 AS INT),
        ts AS TO_TIMESTAMP_LTZ(IF(id = 2, 3, id) * 1000, 3),
        WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
    ) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1',
            'fields.id.end' = '5')
"""


def _table() -> Table:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(DDL)
    return env.from_path("e")


def _rows(t: Table) -> list[tuple[object, ...]]:
    with t.execute().collect() as rows:
        return sorted(tuple(r) for r in rows)


def _by_k() -> OverWindowPartitionedOrdered:
    return Over.partition_by(col("k")).order_by(col("ts"))


def test_the_default_frame_is_unbounded_range_and_unaliased_calls_are_named_c_i() -> None:
    t = _table().over_window(_by_k().alias("w"))
    out = t.select(col("k"), col("id"), col("v").sum.over(col("w")), col("v").count.over(col("w")) + 1)
    assert out.get_schema().get_field_names() == ["k", "id", "_c2", "_c3"]
    assert [str(x) for x in out.get_schema().get_field_data_types()][2:] == ["INT", "BIGINT NOT NULL"]
    # ids 2 and 3 share a timestamp: both see each other (peers)
    assert _rows(out) == [("a", 1, 10, 2), ("a", 2, 60, 4), ("a", 3, 60, 4), ("b", 4, 40, 2), ("b", 5, 90, 3)]
    explicit = _table().over_window(
        _by_k().preceding(UNBOUNDED_RANGE).following(CURRENT_RANGE).alias("w")
    )
    assert _rows(explicit.select(col("id"), col("v").sum.over(col("w")))) == [
        (1, 10), (2, 60), (3, 60), (4, 40), (5, 90),
    ]  # fmt: skip


def test_a_time_interval_is_a_range_frame() -> None:
    t = _table().over_window(_by_k().preceding(lit(1).seconds).alias("w"))
    assert _rows(t.select(col("id"), col("v").sum.over(col("w")).alias("s"))) == [
        (1, 10), (2, 50), (3, 50), (4, 40), (5, 90),
    ]  # fmt: skip


def test_row_counts_and_unbounded_rows_count_rows_in_arrival_order() -> None:
    # flott's datagen is one subtask: id 2 reaches the window before id 3 (same timestamp)
    rows1 = _table().over_window(_by_k().preceding(row_interval(1)).alias("w"))
    assert _rows(rows1.select(col("id"), col("v").sum.over(col("w")))) == [
        (1, 10), (2, 30), (3, 50), (4, 40), (5, 90),
    ]  # fmt: skip
    unbounded = _table().over_window(
        _by_k().preceding(UNBOUNDED_ROW).following(CURRENT_ROW).alias("w")
    )
    assert _rows(unbounded.select(col("id"), col("v").sum.over(col("w")))) == [
        (1, 10), (2, 30), (3, 60), (4, 40), (5, 90),
    ]  # fmt: skip


def test_an_unpartitioned_window_and_a_select_without_over_calls() -> None:
    t = _table().over_window(Over.order_by(col("ts")).alias("w"))
    assert _rows(t.select(col("id"), col("v").sum.over(col("w")).alias("s"))) == [
        (1, 10), (2, 60), (3, 60), (4, 100), (5, 150),
    ]  # fmt: skip
    plain = _table().over_window(_by_k().alias("w")).select(col("id"), col("k"))
    assert _rows(plain) == [(1, "a"), (2, "a"), (3, "a"), (4, "b"), (5, "b")]


def test_a_partition_key_may_be_an_expression() -> None:
    t = _table().over_window(Over.partition_by(col("id") % 2).order_by(col("ts")).alias("w"))
    out = t.select(col("id"), col("v").sum.over(col("w")))
    assert out.get_schema().get_field_names() == ["id", "_c1"]
    assert _rows(out) == [(1, 10), (2, 20), (3, 40), (4, 60), (5, 90)]  # as PyFlink printed


def test_aggregates_of_expressions_and_distinct_aggregates() -> None:
    t = _table().over_window(Over.order_by(col("ts")).alias("w"))
    doubled = (col("v") * 2).sum.over(col("w")).alias("s")
    out = t.select(col("id"), doubled, col("k").count.distinct.over(col("w")).alias("d"))
    assert _rows(out) == [(1, 20, 1), (2, 120, 1), (3, 120, 1), (4, 200, 2), (5, 300, 2)]


def test_refusals_as_in_flink() -> None:
    t = _table()
    w = _by_k().alias("w")
    with pytest.raises(TableError, match=r"Currently, only a single over window is supported\."):
        t.over_window(w, _by_k().alias("w2"))
    with pytest.raises(TableValidationError, match=r"Could not resolve over call\."):
        t.over_window(w).select(col("v").sum.over(col("x")))
    with pytest.raises(TableValidationError, match="expects literal or unbounded bounds for preceding"):
        t.over_window(_by_k().preceding(lit(1)).alias("w")).select(col("v").sum.over(col("w")))
    mixed = _by_k().preceding(UNBOUNDED_RANGE).following(CURRENT_ROW).alias("w")
    with pytest.raises(TableValidationError, match="same interval type"):
        t.over_window(mixed).select(col("v").sum.over(col("w")))
    with pytest.raises(TableValidationError, match="Aggregate functions are not supported here"):
        t.over_window(w).select(col("id"), col("v").sum)
    grouped = t.group_by(col("k")).select(col("k"), col("ts").max.alias("ts"))
    with pytest.raises(TableError, match="doesn't support consuming update and delete changes"):
        grouped.over_window(Over.order_by(col("ts")).alias("w")).select(col("k").count.over(col("w")))


@pytest.mark.parametrize(
    ("window", "call", "message"),
    [
        (lambda: Over.partition_by(col("k")).order_by(col("id")), col("v").sum, "event-time attribute"),
        (lambda: Over.partition_by(col("k")).order_by(col("ts")), col("v").sum0, "only count/sum"),
    ],
)
def test_what_flott_does_not_run_yet_is_refused_at_select(
    window: Callable[[], OverWindowPartitionedOrdered], call: Expression, message: str
) -> None:
    t = _table().over_window(window().alias("w"))
    with pytest.raises(NotYetSupportedError, match=message):
        t.select(call.over(col("w")))


def test_batch_mode_is_refused() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t = env.from_elements([(1, "a")], ["x", "y"])
    w = Over.partition_by(col("y")).order_by(col("x")).alias("w")
    with pytest.raises(NotYetSupportedError, match="batch mode"):
        t.over_window(w).select(col("x").sum.over(col("w")))
