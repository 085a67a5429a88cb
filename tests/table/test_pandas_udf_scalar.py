"""Vectorized (pandas) scalar UDFs: the batches they get (PyFlink 2.3 measured with a UDF returning
``len(series)`` over 25,000 rows at parallelism 1: 25 batches of 1000 by default in batch and
streaming mode; with ``python.fn-execution.bundle.size`` 3 one batch of 1 and the rest of 3), the
dtypes, mixing with other expressions, PyFlink's errors, and where flott refuses them."""

from __future__ import annotations

import collections
import re
from typing import Any

import pytest

from flott.errors import NotYetSupportedError
from flott.table import DataTypes, EnvironmentSettings, TableEnvironment
from flott.table.expressions import col, lit
from flott.table.udf import ScalarFunction, udf, udtf

pd = pytest.importorskip("pandas")


def _env(streaming: bool = False, **conf: str) -> TableEnvironment:
    settings = EnvironmentSettings.in_streaming_mode() if streaming else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", "1")
    for key, value in conf.items():
        t_env.get_config().set(key, value)
    return t_env


@udf(result_type=DataTypes.BIGINT(), func_type="pandas")
def batch_len(a: Any) -> Any:
    return pd.Series([len(a)] * len(a))


def _collect(table: Any) -> list[tuple[Any, ...]]:
    with table.execute().collect() as rows:
        return [tuple(r) for r in rows]


def _batch_sizes(t_env: TableEnvironment, n: int) -> dict[int, int]:
    t = t_env.from_elements([(i,) for i in range(n)], ["a"])
    with t.select(batch_len(col("a"))).execute().collect() as rows:
        return dict(collections.Counter(r[0] for r in rows))


@pytest.mark.parametrize("streaming", [False, True])
def test_rows_arrive_in_batches_of_a_thousand_as_on_pyflink(streaming: bool) -> None:
    assert _batch_sizes(_env(streaming), 2500) == {1000: 2000, 500: 500}


def test_the_arrow_batch_size_and_bundle_size_bound_the_batches() -> None:
    sizes = _batch_sizes(_env(**{"python.fn-execution.arrow.batch.size": "7"}), 30)
    assert sizes == {7: 28, 2: 2}
    sizes = _batch_sizes(
        _env(**{"python.fn-execution.arrow.batch.size": "7", "python.fn-execution.bundle.size": "3"}), 30
    )
    assert sizes == {3: 30}


def test_a_bad_batch_size_is_refused() -> None:
    t_env = _env(**{"python.fn-execution.arrow.batch.size": "0"})
    t = t_env.from_elements([(1,)], ["a"])
    with pytest.raises(Exception, match=r"python\.fn-execution\.arrow\.batch\.size must be greater than 0"):
        _collect(t.select(batch_len(col("a"))))


def test_a_batch_with_a_null_gives_float64_and_mixes_with_general_udfs() -> None:
    @udf(result_type=DataTypes.STRING(), func_type="pandas")
    def dtype(a: Any) -> Any:
        return pd.Series([str(a.dtype)] * len(a))

    @udf(result_type=DataTypes.BIGINT(), func_type="pandas")
    def plus_one(a: Any) -> Any:
        return a + 1

    @udf(result_type=DataTypes.BIGINT())
    def twice(a: Any) -> Any:
        return None if a is None else 2 * a

    t = _env().from_elements(
        [(1,), (None,), (3,)], DataTypes.ROW([DataTypes.FIELD("a", DataTypes.BIGINT())])
    )
    with t.select(
        dtype(col("a")), plus_one(twice(col("a"))), twice(plus_one(col("a"))) + lit(1), col("a") * 3
    ).execute().collect() as rows:
        got = [tuple(r) for r in rows]
    assert got == [("float64", 3, 5, 3), ("float64", None, None, None), ("float64", 7, 9, 9)]


def test_a_pandas_predicate_filters_and_an_ordinary_one_applies_first() -> None:
    seen: list[int] = []

    @udf(result_type=DataTypes.BOOLEAN(), func_type="pandas")
    def even(a: Any) -> Any:
        seen.append(len(a))
        return a % 2 == 0

    t = _env().from_elements([(i,) for i in range(10)], ["a"])
    with t.where((col("a") > 3) & even(col("a"))).execute().collect() as rows:
        assert [r[0] for r in rows] == [4, 6, 8]
    with t.where(col("a") > 5).where(even(col("a"))).execute().collect() as rows:
        assert [r[0] for r in rows] == [6, 8]


def test_a_scalar_function_class_is_opened_and_its_eval_gets_series() -> None:
    class Offset(ScalarFunction):
        def open(self, function_context: Any) -> None:
            self.offset = 100

        def eval(self, a: Any) -> Any:
            return a + self.offset

    offset = udf(Offset(), result_type=DataTypes.BIGINT(), func_type="pandas")
    t = _env(streaming=True).from_elements([(1,), (2,)], ["a"])
    with t.select(offset(col("a"))).execute().collect() as rows:
        assert [r[0] for r in rows] == [101, 102]


def test_wrong_length_and_non_series_results_fail_with_pyflinks_messages() -> None:
    @udf(result_type=DataTypes.BIGINT(), func_type="pandas")
    def head(a: Any) -> Any:
        return a[:1]

    @udf(result_type=DataTypes.BIGINT(), func_type="pandas")
    def as_list(a: Any) -> Any:
        return list(a)

    t = _env().from_elements([(1,), (2,)], ["a"])
    length = "The result length '1' of Pandas UDF 'head' is not equal to the input length '2'"
    with pytest.raises(Exception, match=re.escape(length)):
        _collect(t.select(head(col("a"))))
    kind = (
        "The result type of Pandas UDF 'as_list' must be pandas.Series or pandas.DataFrame, "
        "got <class 'list'>"
    )
    with pytest.raises(Exception, match=re.escape(kind)):
        _collect(t.select(as_list(col("a"))))


def test_a_pandas_udf_where_no_calc_can_batch_it_is_refused() -> None:
    @udf(result_type=DataTypes.BIGINT(), func_type="pandas")
    def plus_one(a: Any) -> Any:
        return a + 1

    @udtf(result_types=[DataTypes.BIGINT()])
    def repeat(n: Any) -> Any:
        for i in range(n):
            yield (i,)

    t = _env().from_elements([(1,)], ["a"])
    with pytest.raises(NotYetSupportedError, match="not yet in this position"):
        _collect(t.join_lateral(repeat(plus_one(col("a"))).alias("i")))


def test_a_literal_argument_arrives_as_the_plain_value() -> None:
    """PyFlink 2.3 passes ``f(col, lit(7))``'s 7 as an int, not a Series (len() of it fails there)."""

    @udf(result_type=DataTypes.STRING(), func_type="pandas")
    def kinds(a: Any, k: Any, s: Any) -> Any:
        return pd.Series([f"{type(a).__name__}/{type(k).__name__}/{type(s).__name__}"] * len(a))

    t = _env().from_elements([(1,), (2,)], ["a"])
    assert _collect(t.select(kinds(col("a"), lit(7), lit("x")))) == [("Series/int/str",)] * 2


@pytest.mark.parametrize("deterministic", [True, False])
def test_a_call_written_twice_runs_twice_as_on_pyflink(deterministic: bool, tmp_path: Any) -> None:
    """PyFlink 2.3 calls a Python UDF written twice in a projection once per place and row, whatever
    ``deterministic`` says (measured with a UDF logging its calls to a file)."""
    log = str(tmp_path / "calls.txt")

    @udf(result_type=DataTypes.BIGINT(), func_type="pandas", deterministic=deterministic)
    def logged(a: Any) -> Any:
        with open(log, "a") as f:
            f.write(f"{len(a)}\n")
        return a

    t = _env().from_elements([(1,), (2,)], ["a"])
    assert logged.deterministic is deterministic
    assert _collect(t.select(logged(col("a")), logged(col("a")) + 1)) == [(1, 2), (2, 3)]
    with open(log) as f:
        assert f.read().split() == ["2", "2"]
