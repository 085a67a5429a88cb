"""table.exec.state.ttl: idle state retention as Flink's planner applies it. A Python UDF pauses the
stream; rows written before the pause are gone after it when the TTL is shorter than the pause.

No assertion compares durations: the TTL (300 ms) is a small fraction of the pause (2 s). A buffer
timeout of 0 flushes the rows from before the pause to the stateful operator before it starts."""

from __future__ import annotations

import datetime
import time

import pytest

from flott.errors import ConfigurationError, NotYetSupportedError
from flott.table import DataTypes, EnvironmentSettings, TableEnvironment
from flott.table.udf import udf

pytestmark = pytest.mark.processes  # the queries run jobs on a local cluster


@udf(result_type=DataTypes.STRING())
def after_pause(k: str) -> str:
    if k == "pause":
        time.sleep(2)
    return k


def _env(ttl: str | None, rows: list[tuple[object, ...]]) -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = env.get_config()
    config.set("parallelism.default", "1")
    config.set("execution.buffer-timeout", "0 ms")
    if ttl is not None:
        config.set("table.exec.state.ttl", ttl)
    env.create_temporary_function("after_pause", after_pause)
    env.create_temporary_view("events", env.from_elements(rows, ["k", "side", "v"]))
    env.create_temporary_view("paced", env.sql_query("SELECT after_pause(k) AS k, side, v FROM events"))
    return env


def _changelog(env: TableEnvironment, sql: str) -> list[str]:
    with env.execute_sql(sql).collect() as rows:
        return [f"{r.get_row_kind()} {tuple(r)}" for r in rows]


JOIN = (
    "SELECT l.k, l.v, r.v FROM (SELECT * FROM paced WHERE side = 'L') l "
    "JOIN (SELECT * FROM paced WHERE side = 'R') r ON l.k = r.k"
)
JOIN_ROWS = [("a", "L", 1), ("pause", "-", 0), ("a", "R", 10), ("a", "L", 4), ("a", "R", 40)]


def test_a_join_row_older_than_the_ttl_no_longer_joins() -> None:
    assert _changelog(_env("300 ms", JOIN_ROWS), JOIN) == [
        "+I ('a', 4, 10)",
        "+I ('a', 4, 40)",
    ]
    assert sorted(_changelog(_env(None, JOIN_ROWS), JOIN)) == sorted(
        ["+I ('a', 1, 10)", "+I ('a', 4, 10)", "+I ('a', 1, 40)", "+I ('a', 4, 40)"]
    )


def test_idle_state_retention_is_the_same_option() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set_idle_state_retention(datetime.timedelta(minutes=2))
    assert env.get_config().get("table.exec.state.ttl") == "120000 ms"
    assert env.get_config().get_idle_state_retention() == datetime.timedelta(minutes=2)
    env.get_config().set("table.exec.state.ttl", "1 h")
    assert env.get_config().get_idle_state_retention() == datetime.timedelta(hours=1)


@pytest.mark.parametrize("value", ["soon", "-5 s", "1 lightyear"])
def test_a_ttl_that_is_no_duration_is_refused_when_set(value: str) -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    with pytest.raises(ConfigurationError, match=r"table\.exec\.state\.ttl"):
        env.get_config().set("table.exec.state.ttl", value)


def test_stateful_operators_that_cannot_honour_it_are_refused_at_plan_time() -> None:
    env = _env("1 h", JOIN_ROWS)
    top_n = (
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM events) "
        "WHERE rn <= 2"
    )
    with pytest.raises(NotYetSupportedError, match=r"table\.exec\.state\.ttl with a streaming Top-N"):
        env.execute_sql(top_n)
    # batch mode keeps no state between rows: the option does not apply there, as in Flink
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    batch.get_config().set("table.exec.state.ttl", "1 h")
    batch.create_temporary_view("events", batch.from_elements(JOIN_ROWS, ["k", "side", "v"]))
    with batch.execute_sql(top_n).collect() as rows:
        assert sorted(tuple(r) for r in rows) == [
            ("a", "L", 1, 1), ("a", "L", 4, 2), ("pause", "-", 0, 1)
        ]
