"""SQL date/time functions: Flink's result types and values (planned and evaluated without a job)."""

from __future__ import annotations

import datetime

import pytest

from flott.errors import NotYetSupportedError, SqlParseError, TableValidationError
from flott.table import EnvironmentSettings, TableEnvironment
from flott.table.sql_windows import rewrite
from flott.table.time_functions import (
    java_format,
    java_parse,
    n_ceil_to,
    n_extract,
    n_floor_to,
    n_timestamp_diff,
)


@pytest.fixture
def t_env() -> TableEnvironment:
    return TableEnvironment.create(EnvironmentSettings.in_batch_mode())


def _types(t_env: TableEnvironment, select: str) -> list[str]:
    return [str(t) for t in t_env.sql_query(f"SELECT {select}").get_schema().get_field_data_types()]


def test_typed_literals_take_flinks_types(t_env: TableEnvironment) -> None:
    assert _types(t_env, "TIMESTAMP '2024-01-15 10:30:45.123', TIMESTAMP '2024-01-15 10:30:45', "
                  "DATE '2024-01-01', CAST('2024-01-01 00:00:00' AS TIMESTAMP(3))") == [
        "TIMESTAMP(3) NOT NULL", "TIMESTAMP(0) NOT NULL", "DATE NOT NULL", "TIMESTAMP(3)"
    ]
    with pytest.raises(SqlParseError, match="Illegal DATE literal"):
        t_env.sql_query("SELECT DATE '2024-13-01'")


def test_time_functions_are_typed_as_in_flink(t_env: TableEnvironment) -> None:
    assert _types(
        t_env,
        "EXTRACT(YEAR FROM DATE '2024-03-01'), HOUR(TIMESTAMP '2024-01-15 10:30:45'), "
        "DATE_FORMAT(TIMESTAMP '2024-01-15 10:30:45', 'yyyy'), TO_DATE('2024-07-04'), "
        "TO_TIMESTAMP('2024-07-04 12:00:00'), TIMESTAMPDIFF(DAY, DATE '2024-01-01', DATE '2024-02-01'), "
        "FLOOR(TIMESTAMP '2024-01-15 10:30:45' TO HOUR), DATE '2024-02-28' + INTERVAL '1' DAY",
    ) == [
        "BIGINT NOT NULL", "BIGINT NOT NULL", "STRING NOT NULL", "DATE", "TIMESTAMP(3)", "INT NOT NULL",
        "TIMESTAMP(0) NOT NULL", "DATE NOT NULL",
    ]


def test_time_functions_refuse_what_they_cannot_mean(t_env: TableEnvironment) -> None:
    with pytest.raises(TableValidationError, match="Cannot apply 'extract'"):
        t_env.sql_query("SELECT EXTRACT(YEAR FROM 'x')")
    with pytest.raises(NotYetSupportedError, match="current time"):
        t_env.sql_query("SELECT UNIX_TIMESTAMP()")
    with pytest.raises(NotYetSupportedError, match="unit MILLENNIUM"):
        t_env.sql_query("SELECT EXTRACT(MILLENNIUM FROM DATE '2024-01-01')")


def test_functions_sqlglot_would_rewrite_keep_their_length_and_position() -> None:
    sql = "SELECT DATE_FORMAT(ts, 'yyyy'), TO_TIMESTAMP_LTZ(1, 3), `TO_DATE`(x) FROM t"
    out = rewrite(sql).text
    assert len(out) == len(sql) and out.startswith("SELECT _FTE_FORMAT(ts, 'yyyy'), TO_TIMESTAMP_LTZ(")
    assert "`TO_DATE`" in out, "a quoted identifier is the user's, not a function to rename"


def test_java_date_patterns() -> None:
    moment = datetime.datetime(2024, 1, 5, 13, 4, 9, 123000)
    assert java_format(moment, "yyyy/MM/dd HH:mm:ss.SSS") == "2024/01/05 13:04:09.123"
    assert java_format(moment, "yy-M-d h a 'at' EEE") == "24-1-5 1 PM at Fri"
    assert java_parse("2024/01/05 13:04", "yyyy/MM/dd HH:mm") == datetime.datetime(2024, 1, 5, 13, 4)


def test_extract_floor_ceil_and_diff_values() -> None:
    moment = datetime.datetime(2024, 3, 10, 10, 30, 45)  # a Sunday
    assert [n_extract(u, moment) for u in ("QUARTER", "DOY", "DOW", "SECOND")] == [1, 70, 1, 45]
    assert n_floor_to(moment, "MONTH") == datetime.datetime(2024, 3, 1)
    assert n_floor_to(moment, "WEEK") == datetime.datetime(2024, 3, 10)
    assert n_ceil_to(moment, "HOUR") == datetime.datetime(2024, 3, 10, 11)
    assert n_ceil_to(datetime.datetime(2024, 12, 5), "MONTH") == datetime.datetime(2025, 1, 1)
    start = datetime.datetime(2024, 1, 31)
    assert n_timestamp_diff("MONTH", start, datetime.datetime(2024, 2, 29)) == 0
    assert n_timestamp_diff("MONTH", start, datetime.datetime(2024, 3, 31)) == 2
    assert n_timestamp_diff("HOUR", datetime.datetime(2024, 1, 2), start) == 29 * 24
    assert n_timestamp_diff("DAY", datetime.datetime(2024, 1, 2, 12), datetime.datetime(2024, 1, 1)) == -1
