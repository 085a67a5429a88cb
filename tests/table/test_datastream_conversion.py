"""A DataStream as a Table and back: the conversions a StreamTableEnvironment user meets, and the programs
it refuses at plan time (each with the message a PyFlink user would look for)."""

from __future__ import annotations

import pytest

from flott.common import Row, RowKind, Types
from flott.datastream import StreamExecutionEnvironment
from flott.errors import NotYetSupportedError, TableError, TableValidationError
from flott.table import DataTypes, Schema, StreamTableEnvironment
from flott.table.expressions import col

pytestmark = pytest.mark.processes  # the conversions that run do so on a local cluster


def _envs() -> tuple[StreamExecutionEnvironment, StreamTableEnvironment]:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    return env, StreamTableEnvironment.create(env)


def _scores(env: StreamExecutionEnvironment) -> object:
    return env.from_collection(
        [("alice", 3), ("bob", 5), ("alice", 4)],
        type_info=Types.ROW_NAMED(["name", "score"], [Types.STRING(), Types.INT()]),
    )


def test_a_stream_without_a_declared_type_is_refused_with_the_way_out() -> None:
    env, t_env = _envs()
    with pytest.raises(NotYetSupportedError, match=r"declare it, e\.g\. type_info=Types\.ROW_NAMED"):
        t_env.from_data_stream(env.from_collection([("a", 1)]))


def test_a_schema_column_the_stream_does_not_have_is_a_validation_error() -> None:
    env, t_env = _envs()
    schema = Schema.new_builder().column("nme", DataTypes.STRING()).build()
    with pytest.raises(TableValidationError, match=r"Unable to find a field named 'nme'.*\[name, score\]"):
        t_env.from_data_stream(_scores(env), schema)


def test_a_real_cast_in_the_schema_is_refused_not_ignored() -> None:
    env, t_env = _envs()
    schema = Schema.new_builder().column("score", DataTypes.STRING()).build()
    with pytest.raises(NotYetSupportedError, match="column 'score' as STRING"):
        t_env.from_data_stream(_scores(env), schema)


def test_expressions_must_name_fields_or_match_their_count() -> None:
    env, t_env = _envs()
    with pytest.raises(TableValidationError, match=r"Cannot resolve field \[nobody\]"):
        t_env.from_data_stream(_scores(env), col("name"), col("nobody"))
    with pytest.raises(TableValidationError, match="Number of expressions does not match"):
        t_env.from_data_stream(_scores(env), col("x"))
    with pytest.raises(NotYetSupportedError, match="rowtime attribute"):
        t_env.from_data_stream(_scores(env), col("name"), col("score").rowtime)


def test_an_updating_table_cannot_become_an_insert_only_stream() -> None:
    env, t_env = _envs()
    totals = t_env.from_data_stream(_scores(env)).group_by(col("name")).select(col("name"), col("score").sum)
    with pytest.raises(TableError, match="doesn't support consuming update changes"):
        t_env.to_data_stream(totals)
    with pytest.raises(NotYetSupportedError, match="ChangelogMode"):
        t_env.to_changelog_stream(totals, changelog_mode=object())


def test_schema_widening_and_renaming_by_expressions_reach_the_rows() -> None:
    env, t_env = _envs()
    schema = (
        Schema.new_builder().column("score", DataTypes.DOUBLE()).column("name", DataTypes.STRING()).build()
    )
    widened = t_env.from_data_stream(_scores(env), schema)
    assert [str(t) for t in widened.get_schema().get_field_data_types()] == ["DOUBLE", "STRING"]
    renamed = t_env.from_data_stream(_scores(env), col("score").alias("points"), col("name"))
    assert renamed.get_schema().get_field_names() == ["points", "name"]
    out = t_env.to_data_stream(widened.select(col("name"), col("score")))
    with out.execute_and_collect() as rows:
        assert sorted((r.name, r.score) for r in rows) == [("alice", 3.0), ("alice", 4.0), ("bob", 5.0)]


def test_the_changelog_stream_of_a_grouped_sum_carries_row_kinds() -> None:
    env, t_env = _envs()
    totals = t_env.from_data_stream(_scores(env)).group_by(col("name")).select(
        col("name"), col("score").sum.alias("total")
    )
    with t_env.to_changelog_stream(totals).execute_and_collect() as rows:
        seen = [(r.get_row_kind(), tuple(r)) for r in rows]
    assert seen == [
        (RowKind.INSERT, ("alice", 3)),
        (RowKind.INSERT, ("bob", 5)),
        (RowKind.UPDATE_BEFORE, ("alice", 3)),
        (RowKind.UPDATE_AFTER, ("alice", 7)),
    ]


def test_a_retraction_row_fed_to_from_data_stream_fails_the_job() -> None:
    env, t_env = _envs()
    changes = env.from_collection(
        [Row("alice", 3), Row.of_kind(RowKind.DELETE, "alice", 3)],
        type_info=Types.ROW_NAMED(["name", "score"], [Types.STRING(), Types.INT()]),
    )
    table = t_env.from_data_stream(changes)
    with pytest.raises(Exception, match="from_data_stream expects insert-only records"):
        with t_env.to_data_stream(table).execute_and_collect() as rows:
            list(rows)
