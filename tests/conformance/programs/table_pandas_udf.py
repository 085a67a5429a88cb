"""Vectorized (pandas) scalar UDFs: each argument arrives as a pandas.Series of a batch of rows
and the function returns a Series of the same length; in the Table API, in SQL and in a filter."""
import pandas as pd

from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col
from pyflink.table.udf import udf


@udf(result_type=DataTypes.BIGINT(), func_type="pandas")
def add(a, b):
    return a + b


@udf(result_type=DataTypes.STRING(), func_type="pandas")
def shout(s):
    return s.str.upper() + "!"


@udf(result_type=DataTypes.DOUBLE(), func_type="pandas")
def scaled(x):
    return x * 1.5


@udf(result_type=DataTypes.STRING(), func_type="pandas")
def dtypes(a, s, x, flag):
    kinds = f"{type(a).__name__}/{a.dtype}/{s.dtype}/{x.dtype}/{flag.dtype}"
    return pd.Series([kinds] * len(a))


@udf(result_type=DataTypes.BOOLEAN(), func_type="pandas")
def is_big(x):
    return x > 10


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t = t_env.from_elements(
        [(1, 2, "ann", 2.0, True), (5, 7, "ben", 10.0, False), (3, 4, "cy", 20.0, True)],
        ["a", "b", "name", "x", "flag"],
    )
    t.select(col("a"), add(col("a"), col("b")).alias("ab"), shout(col("name")).alias("loud"),
             scaled(col("x")).alias("x15")).execute().print()
    t.select(dtypes(col("a"), col("name"), col("x"), col("flag")).alias("kinds")).execute().print()
    t.where(is_big(col("x"))).select(col("name"), (add(col("a"), col("b")) * 2).alias("twice")) \
        .execute().print()
    t_env.create_temporary_function("add", add)
    t_env.create_temporary_function("shout", shout)
    t_env.create_temporary_view("t", t)
    t_env.sql_query("SELECT name, add(a, 100) AS big, shout(name) AS s FROM t WHERE a > 1") \
        .execute().print()

    b_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    b_env.get_config().set("parallelism.default", "1")
    nulls = b_env.from_elements(
        [(1, "x", 1.0, True), (None, None, None, None)],
        DataTypes.ROW([DataTypes.FIELD("a", DataTypes.BIGINT()), DataTypes.FIELD("s", DataTypes.STRING()),
                       DataTypes.FIELD("x", DataTypes.DOUBLE()), DataTypes.FIELD("flag", DataTypes.BOOLEAN())]),
    )
    nulls.select(dtypes(col("a"), col("s"), col("x"), col("flag")).alias("kinds"),
                 scaled(col("x")).alias("x15")).execute().print()
    b_env.from_elements([(i, i * 2) for i in range(5)], ["a", "b"]) \
        .group_by(col("a") % 2).select((col("a") % 2).alias("odd"), add(col("a"), col("b")).sum.alias("s")) \
        .execute().print()


if __name__ == "__main__":
    main()
