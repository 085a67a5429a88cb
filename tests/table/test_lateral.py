"""Python table functions: what a @udtf's eval gives becomes rows as PyFlink makes them (None: no row;
a list, range or generator: a row per item; a tuple or Row: its fields; anything else: one field), and
what Flink refuses about lateral joins is refused with Flink's words."""

from __future__ import annotations

from typing import Any

import pytest

from flott.common.types import Row
from flott.errors import JobExecutionError, NotYetSupportedError, TableError, TableValidationError
from flott.table import DataTypes, EnvironmentSettings, TableEnvironment
from flott.table.expressions import col, lit
from flott.table.udf import AggregateFunction, TableFunction, udaf, udtf

pytestmark = pytest.mark.processes  # collect() runs the job on a local cluster


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def split(s: Any) -> Any:
    if s is None:
        return
    for word in s.split(" "):
        if word:
            yield word, len(word)


def _env() -> tuple[TableEnvironment, Any]:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t = env.from_elements([(1, "a bb"), (2, ""), (3, None)], ["id", "s"])
    env.create_temporary_view("t", t)
    env.create_temporary_function("split_words", split)
    return env, t


def _rows(table: Any) -> list[tuple[Any, ...]]:
    with table.execute().collect() as rows:
        return [tuple(r) for r in rows]


def test_an_inner_lateral_join_drops_a_row_the_function_gives_nothing_for_and_an_outer_one_keeps_it() -> None:
    _, t = _env()
    inner = t.join_lateral(split(col("s")).alias("w", "n"))
    assert _rows(inner) == [(1, "a bb", "a", 1), (1, "a bb", "bb", 2)]
    outer = t.left_outer_join_lateral(split(col("s")).alias("w", "n"))
    assert _rows(outer) == [
        (1, "a bb", "a", 1),
        (1, "a bb", "bb", 2),
        (2, "", None, None),
        (3, None, None, None),
    ]


@pytest.mark.parametrize(
    ("body", "types", "expected"),
    [
        (lambda x: None, DataTypes.BIGINT(), []),
        (lambda x: [], DataTypes.BIGINT(), []),
        (lambda x: range(x), DataTypes.BIGINT(), [(2, 0), (2, 1)]),
        (lambda x: (x, x + 1), [DataTypes.BIGINT(), DataTypes.BIGINT()], [(2, 2, 3)]),
        (lambda x: x * 10, DataTypes.BIGINT(), [(2, 20)]),
        (lambda x: [None], DataTypes.BIGINT(), [(2, None)]),
        (lambda x: [Row(x, "r")], [DataTypes.BIGINT(), DataTypes.STRING()], [(2, 2, "r")]),
        (lambda x: [(x, 1, 99)], [DataTypes.BIGINT(), DataTypes.INT()], [(2, 2, 1)]),  # PyFlink drops extras
    ],
)
def test_what_eval_gives_becomes_rows_as_in_pyflink(body: Any, types: Any, expected: list[Any]) -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    fn = udtf(body, result_types=types)
    t = env.from_elements([(2,)], ["x"])
    assert _rows(t.join_lateral(fn(col("x")))) == expected


def test_a_row_with_fewer_fields_than_declared_fails_the_job_naming_the_function() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())

    @udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
    def only_none(s: Any) -> Any:
        yield None

    t = env.from_elements([("a",)], ["s"])
    with pytest.raises(JobExecutionError, match=r"only_none.*gave a row of 1 field\(s\).*declare 2"):
        _rows(t.join_lateral(only_none(col("s")).alias("a", "b")))


def test_a_table_function_class_is_opened_before_its_first_row() -> None:
    class Repeat(TableFunction):
        def open(self, function_context: Any) -> None:
            self.times = 3

        def eval(self, x: Any) -> Any:
            for i in range(self.times):
                yield x, i

    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    repeat = udtf(Repeat(), result_types=[DataTypes.BIGINT(), DataTypes.INT()])
    t = env.from_elements([(7,)], ["x"])
    assert _rows(t.flat_map(repeat(col("x")))) == [(7, 0), (7, 1), (7, 2)]
    assert t.flat_map(repeat(col("x"))).get_schema().get_field_names() == ["f0", "f1"]


def test_a_row_string_result_type_names_the_columns_and_a_bare_udtf_takes_the_whole_row() -> None:
    _, t = _env()
    named = udtf(lambda s: [(s, 1)], result_types="ROW<word STRING, one INT>")
    assert t.join_lateral(named(col("s"))).get_schema().get_field_names() == ["id", "s", "word", "one"]

    @udtf(result_types=[DataTypes.BIGINT(), DataTypes.STRING()])
    def of_row(row: Any) -> Any:
        yield row.id, row[1]

    assert _rows(t.where(col("id") == 1).flat_map(of_row)) == [(1, "a bb")]
    joined = t.where(col("id") == 1).join_lateral(of_row.alias("rid", "rs"))
    assert _rows(joined) == [(1, "a bb", 1, "a bb")]


def test_sql_lateral_table_forms() -> None:
    env, _ = _env()

    def sql(q: str) -> list[tuple[Any, ...]]:
        with env.execute_sql(q).collect() as rows:
            return [tuple(r) for r in rows]

    cross = sql("SELECT id, w FROM t CROSS JOIN LATERAL TABLE(split_words(s)) AS T(w, n)")
    assert cross == [(1, "a"), (1, "bb")]
    assert sql("SELECT id, w FROM t, LATERAL TABLE(split_words(s)) T(w, n) WHERE n > 1") == [(1, "bb")]
    assert sql("SELECT id, f1 FROM t, LATERAL TABLE(split_words(s))") == [(1, 1), (1, 2)]
    assert sql("SELECT id, w FROM t LEFT JOIN LATERAL TABLE(split_words(s)) AS T(w, n) ON TRUE") == [
        (1, "a"),
        (1, "bb"),
        (2, None),
        (3, None),
    ]
    assert sql("SELECT id, w FROM t JOIN LATERAL TABLE(split_words(s)) AS T(w, n) ON n = id") == [(1, "a")]


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda t: t.join_lateral(split(col("s")).alias("w", "n"), col("n") > 1), TableValidationError,
         r"Invalid join condition: greaterThan\(n, 1\). At least one equi-join predicate is required."),
        (lambda t: t.left_outer_join_lateral(split(col("s")).alias("w", "n"), col("n") == col("id")),
         TableValidationError, "lateral left outer join with table function can only be empty or literal"),
        (lambda t: t.join_lateral(split(col("s")).alias("s", "n")), TableValidationError,
         r"join relations with ambiguous names: \[s\]"),
        (lambda t: t.join_lateral(split(col("s")).alias("w")), TableValidationError,
         "List of column aliases must have same degree as table"),
        (lambda t: t.flat_map(split(col("s")).alias("a", "b")), TableValidationError,
         "Only a table function can be used in the flatMap operator."),
        (lambda t: t.select(split(col("s"))), TableValidationError, "cannot be called as a scalar"),
        (lambda t: t.join_lateral(udtf(lambda x: [x], result_types=DataTypes.INT())), AttributeError,
         "must be followed by a alias"),
        (lambda t: udtf(lambda x: [x]), NotYetSupportedError, "needs its result_types"),
    ],
)
def test_table_api_refusals(build: Any, error: type[Exception], message: str) -> None:
    _, t = _env()
    with pytest.raises(error, match=message):
        build(t)


def test_an_outer_lateral_join_with_a_true_literal_predicate_is_the_plain_outer_join() -> None:
    _, t = _env()
    plain = t.left_outer_join_lateral(split(col("s")).alias("w", "n"))
    with_true = t.left_outer_join_lateral(split(col("s")).alias("w", "n"), lit(True))
    assert _rows(plain) == _rows(with_true)


@pytest.mark.parametrize(
    ("query", "error", "message"),
    [
        ("SELECT id FROM t LEFT JOIN LATERAL TABLE(split_words(s)) AS T(w, n) ON n > 1", TableError,
         "Currently Python correlate does not support conditions in left join."),
        ("SELECT id FROM t, LATERAL TABLE(nope(s)) AS T(w)", TableValidationError,
         r"From line 1, column 33 to line 1, column 39: No match found for function signature "
         r"nope\(<CHARACTER>\)"),
        ("SELECT id FROM t, LATERAL TABLE(split_words(s)) AS T(w)", TableValidationError,
         r"At line 1, column 54: List of column aliases must have same degree as table; table has 2 columns "
         r"\('f0', 'f1'\), whereas alias list has 1 columns"),
        ("SELECT id FROM t, LATERAL TABLE(split(s)) AS T(w, n)", TableValidationError,
         "Function 'split' cannot be used as a table function."),
    ],
)
def test_sql_refusals_use_flinks_words(query: str, error: type[Exception], message: str) -> None:
    env, _ = _env()
    env.create_temporary_function("split", split)
    with pytest.raises(error, match=message):
        env.sql_query(query)


def test_a_python_aggregate_without_retract_over_an_updating_input_is_refused_when_planned() -> None:
    class SumOnly(AggregateFunction):
        def create_accumulator(self) -> Any:
            return [0]

        def accumulate(self, acc: Any, v: Any) -> None:
            acc[0] += v

        def get_value(self, acc: Any) -> Any:
            return acc[0]

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    sum_only = udaf(SumOnly(), result_type=DataTypes.BIGINT())
    totals = env.from_elements([("a", 1), ("a", 2)], ["k", "v"]).group_by(col("k")).select(
        col("k"), col("v").sum.alias("total")
    )
    with pytest.raises(TableError, match=r"SumOnly .*Method retract is not implemented"):
        totals.select(sum_only(col("total"))).execute()
    # over an insert-only input it needs no retract
    plain = env.from_elements([("a", 1), ("a", 2)], ["k", "v"]).group_by(col("k")).select(sum_only(col("v")))
    with plain.execute().collect() as rows:
        assert [tuple(r) for r in rows][-1] == (3,)


def test_a_registered_table_function_is_called_by_name_in_the_table_api() -> None:
    from flott.table.expressions import call

    _, t = _env()
    joined = t.join_lateral(call("split_words", col("s")).alias("w", "n")).select(col("id"), col("w"))
    assert _rows(joined) == [(1, "a"), (1, "bb")]
    with pytest.raises(TableValidationError, match="Undefined function: nope"):
        t.join_lateral(call("nope", col("s")).alias("w"))
