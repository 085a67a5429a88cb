"""Vectorized (pandas) UDAFs: what the function receives (PyFlink's dtypes, measured on PyFlink
2.3: int64 without nulls, float64 with NaN when a null is in the group), and the refusals."""

from __future__ import annotations

import pytest

from flott.errors import TableError
from flott.table import DataTypes, EnvironmentSettings, TableEnvironment
from flott.table.expressions import col
from flott.table.udf import udaf, udf

pd = pytest.importorskip("pandas")


def _batch_env() -> TableEnvironment:
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "1")
    return t_env


def test_a_pandas_udaf_gets_a_groups_values_as_series() -> None:
    @udaf(result_type=DataTypes.STRING(), func_type="pandas")
    def describe(v: pd.Series) -> str:
        return f"{type(v).__name__}/{v.dtype}/{sorted(v.dropna().tolist())}"

    t_env = _batch_env()
    t = t_env.from_elements(
        [("a", 1), ("a", 3), ("b", None), ("b", 2)],
        DataTypes.ROW([DataTypes.FIELD("k", DataTypes.STRING()), DataTypes.FIELD("v", DataTypes.BIGINT())]),
    )
    with t.group_by(col("k")).select(col("k"), describe(col("v"))).execute().collect() as rows:
        got = sorted(tuple(r) for r in rows)
    assert got == [("a", "Series/int64/[1, 3]"), ("b", "Series/float64/[2.0]")]


def test_a_numpy_result_becomes_the_declared_type() -> None:
    @udaf(result_type=DataTypes.BIGINT(), func_type="pandas")
    def total(v: pd.Series) -> object:
        return v.sum()  # numpy.int64

    t_env = _batch_env()
    t = t_env.from_elements([("a", 1), ("a", 3), ("b", 2)], ["k", "v"])
    with t.group_by(col("k")).select(col("k"), total(col("v"))).execute().collect() as rows:
        got = sorted(tuple(r) for r in rows)
    assert got == [("a", 4), ("b", 2)]
    assert all(type(v) is int for _, v in got)


def test_streaming_group_by_refuses_a_pandas_udaf_as_pyflink_does() -> None:
    @udaf(result_type=DataTypes.DOUBLE(), func_type="pandas")
    def mean(v: pd.Series) -> float:
        return float(v.mean())

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t = t_env.from_elements([("a", 1)], ["k", "v"])
    with pytest.raises(TableError, match="Pandas UDAFs are not supported in streaming mode currently"):
        t.group_by(col("k")).select(col("k"), mean(col("v"))).execute()


def test_an_unknown_func_type_is_refused_with_pyflinks_message() -> None:
    with pytest.raises(ValueError, match="The func_type must be one of 'general, pandas', got arrow"):
        udf(lambda v: v, result_type=DataTypes.BIGINT(), func_type="arrow")
