"""Top-N and deduplication (ROW_NUMBER() OVER ... filtered on the row number): the changelog Flink's
AppendOnlyTopNFunction and RowTimeDeduplicateFunction emit, batch ranks, and what is refused."""

from __future__ import annotations

import pytest

from flott.errors import NotYetSupportedError
from flott.table import EnvironmentSettings, TableEnvironment

pytestmark = pytest.mark.processes  # execute_sql(...).collect() runs the job on a local cluster

ROWS = [("a", 5), ("a", 7), ("a", 6), ("a", 9), ("b", 1)]


def _top(cols: str, over: str, cond: str) -> str:
    return f"SELECT {cols} FROM (SELECT *, ROW_NUMBER() OVER ({over}) AS rn FROM T) WHERE {cond}"


def _env(streaming: bool) -> TableEnvironment:
    settings = EnvironmentSettings.in_streaming_mode() if streaming else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    env.get_config().set("parallelism.default", "1")
    env.create_temporary_view("T", env.from_elements(ROWS, ["k", "v"]))
    return env


def _changelog(env: TableEnvironment, sql: str) -> list[str]:
    with env.execute_sql(sql).collect() as rows:
        return [f"{r.get_row_kind()} {tuple(r)}" for r in rows]


def test_streaming_top_n_with_the_row_number_shifts_the_ranks_below_a_new_row() -> None:
    sql = _top("k, v, rn", "PARTITION BY k ORDER BY v DESC", "rn <= 2")
    assert _changelog(_env(True), sql) == [
        "+I ('a', 5, 1)",
        "-U ('a', 5, 1)", "+U ('a', 7, 1)", "+I ('a', 5, 2)",
        "-U ('a', 5, 2)", "+U ('a', 6, 2)",
        "-U ('a', 7, 1)", "+U ('a', 9, 1)", "-U ('a', 6, 2)", "+U ('a', 7, 2)",
        "+I ('b', 1, 1)",
    ]


def test_streaming_top_n_without_the_row_number_deletes_the_row_pushed_out() -> None:
    sql = _top("k, v", "PARTITION BY k ORDER BY v DESC", "rn < 3")
    assert _changelog(_env(True), sql) == [
        "+I ('a', 5)", "+I ('a', 7)", "-D ('a', 5)", "+I ('a', 6)", "-D ('a', 6)", "+I ('a', 9)",
        "+I ('b', 1)",
    ]


def test_batch_rank_range_and_flipped_bounds() -> None:
    sql = _top("k, v, rn", "PARTITION BY k ORDER BY v", "2 = rn")
    assert _changelog(_env(False), sql) == ["+I ('a', 6, 2)"]
    between = _top("v, rn", "ORDER BY v", "rn BETWEEN 2 AND 3")
    assert sorted(_changelog(_env(False), between)) == ["+I (5, 2)", "+I (6, 3)"]


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT k, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM T", "the OVER aggregation"),
        (_top("*", "ORDER BY v", "rn > 2"), "OVER aggregation"),
        (_top("*", "ORDER BY v + 1", "rn <= 2"), "only columns"),
        ("SELECT k, SUM(v) OVER (ORDER BY v) FROM T", "OVER aggregations"),
    ],
)
def test_what_is_not_a_top_n_is_refused(sql: str, message: str) -> None:
    with pytest.raises(NotYetSupportedError, match=message):
        _env(True).execute_sql(sql)


def test_an_updating_input_is_refused() -> None:
    env = _env(True)
    sql = (
        "SELECT * FROM (SELECT k, c, ROW_NUMBER() OVER (ORDER BY c) AS rn FROM "
        "(SELECT k, COUNT(*) AS c FROM T GROUP BY k)) WHERE rn <= 1"
    )
    with pytest.raises(NotYetSupportedError, match="updating input"):
        env.execute_sql(sql)
