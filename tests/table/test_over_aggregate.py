"""OVER aggregations on event time: ROWS and RANGE frames, late rows, and what is refused."""

from __future__ import annotations

import pytest

from flott.errors import NotYetSupportedError, TableValidationError
from flott.table import EnvironmentSettings, TableEnvironment

pytestmark = pytest.mark.processes  # execute_sql(...).collect() runs the job on a local cluster

DDL = """
    CREATE TABLE e (
        id BIGINT,
        k AS IF(id <= 3, 'a', 'b'),
        ts AS TO_TIMESTAMP_LTZ(IF(id = 2, 3, id) * 1000, 3),
        WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
    ) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1',
            'fields.id.end' = '5')
"""


def _env() -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("table.local-time-zone", "UTC")
    env.execute_sql(DDL)
    return env


def _rows(env: TableEnvironment, sql: str) -> list[tuple[object, ...]]:
    with env.execute_sql(sql).collect() as rows:
        return [tuple(r) for r in rows]


def test_rows_frames_count_rows_and_range_frames_count_peers() -> None:
    # ids 2 and 3 share a timestamp (peers)
    frame = "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
    rows = f"SELECT k, id, SUM(id) OVER (PARTITION BY k ORDER BY ts {frame}) FROM e"
    assert sorted(_rows(_env(), rows)) == [("a", 1, 1), ("a", 2, 3), ("a", 3, 6), ("b", 4, 4), ("b", 5, 9)]
    peers = "SELECT k, id, SUM(id) OVER (PARTITION BY k ORDER BY ts) FROM e"
    assert sorted(_rows(_env(), peers)) == [("a", 1, 1), ("a", 2, 6), ("a", 3, 6), ("b", 4, 4), ("b", 5, 9)]
    bounded = (
        "SELECT id, COUNT(*) OVER w FROM e "
        "WINDOW w AS (ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW)"
    )
    assert sorted(_rows(_env(), bounded)) == [(1, 1), (2, 2), (3, 2), (4, 3), (5, 2)]


def test_rows_n_preceding_counts_the_row_and_the_n_before_it() -> None:
    # as PyFlink 2.3 printed at parallelism 1 (ids 2 and 3 share a timestamp and arrive 2, 3)
    frame = "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW"
    sql = f"SELECT id, SUM(id) OVER (ORDER BY ts {frame}), COUNT(*) OVER (ORDER BY ts {frame}) FROM e"
    assert _rows(_env(), sql) == [(1, 1, 1), (2, 3, 2), (3, 6, 3), (4, 9, 3), (5, 12, 3)]
    with pytest.raises(TableValidationError, match="a row count"):
        _env().execute_sql(
            "SELECT SUM(id) OVER (ORDER BY ts ROWS BETWEEN 'x' PRECEDING AND CURRENT ROW) FROM e"
        )


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT SUM(id) OVER (ORDER BY id) FROM e", "event-time attribute"),
        ("SELECT SUM(id) OVER (ORDER BY ts), COUNT(*) OVER (PARTITION BY k ORDER BY ts) FROM e", "different"),
        ("SELECT SUM(id) OVER (ORDER BY ts) + 1 FROM e", "inside an expression"),
    ],
)
def test_what_flott_does_not_plan_over_is_refused(sql: str, message: str) -> None:
    with pytest.raises(NotYetSupportedError, match=message):
        _env().execute_sql(sql)
