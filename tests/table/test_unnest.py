"""UNNEST (a correlate of an ARRAY column, the elements of an ARRAY literal) and CARDINALITY."""

from __future__ import annotations

import pytest

from flott.errors import NotYetSupportedError, TableValidationError
from flott.table import DataTypes, EnvironmentSettings, TableEnvironment

pytestmark = pytest.mark.processes  # execute_sql(...).collect() runs the job on a local cluster


def _env() -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    schema = DataTypes.ROW(
        [DataTypes.FIELD("id", DataTypes.INT()), DataTypes.FIELD("tags", DataTypes.ARRAY(DataTypes.STRING()))]
    )
    env.create_temporary_view("p", env.from_elements([(1, ["a", "b"]), (2, None), (3, [])], schema))
    return env


def _rows(env: TableEnvironment, sql: str) -> list[tuple[object, ...]]:
    with env.execute_sql(sql).collect() as rows:
        return [tuple(r) for r in rows]


def test_cross_join_unnest_gives_a_row_per_element_and_none_for_empty_or_null_arrays() -> None:
    env = _env()
    assert _rows(env, "SELECT id, tag FROM p CROSS JOIN UNNEST(tags) AS t(tag)") == [(1, "a"), (1, "b")]
    assert _rows(env, "SELECT id, CARDINALITY(tags) AS n FROM p") == [(1, 2), (2, None), (3, 0)]
    assert _rows(env, "SELECT x + 1 AS y FROM UNNEST(ARRAY[3, 1]) AS t(x)") == [(4,), (2,)]


@pytest.mark.parametrize(
    ("sql", "error", "message"),
    [
        ("SELECT * FROM p CROSS JOIN UNNEST(tags) AS t(tag, i)", NotYetSupportedError, "one column"),
        ("SELECT * FROM p CROSS JOIN UNNEST(id) AS t(x)", NotYetSupportedError, "only an ARRAY column"),
        ("SELECT CARDINALITY(id) FROM p", TableValidationError, "Cannot apply 'CARDINALITY'"),
    ],
)
def test_what_flott_does_not_unnest_is_refused(sql: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        _env().sql_query(sql)
