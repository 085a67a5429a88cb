"""Vectorized (pandas) scalar UDFs in select and add_columns: each argument arrives as a
pandas.Series of a batch of rows (the dtypes PyFlink's Arrow batches give: a BIGINT column with a
null is float64, a BOOLEAN one object), the result is a Series of as many values; mixed in one
projection with ordinary expressions and a general Python UDF, nested in each other, in batch and
streaming mode."""
import datetime

import pandas as pd
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col, lit
from pyflink.table.udf import udf


@udf(result_type=DataTypes.STRING(), func_type="pandas")
def dtype_of(s):
    return pd.Series([f"{s.dtype}:{v}" for v in s])


@udf(result_type=DataTypes.BIGINT(), func_type="pandas")
def plus_one(a):
    return a + 1


@udf(result_type=DataTypes.DOUBLE(), func_type="pandas")
def scaled(price, qty):
    return price * qty


@udf(result_type=DataTypes.STRING(), func_type="pandas")
def shout(s):
    return s.str.upper() + "!"


@udf(result_type=DataTypes.BIGINT())
def general_double(a):
    return None if a is None else a * 2


def rows():
    return [
        (1, 2.5, "apple", True, datetime.datetime(2024, 1, 1, 10, 0, 1)),
        (None, None, None, None, None),
        (3, 0.5, "pear", False, datetime.datetime(2024, 1, 1, 10, 0, 3, 250000)),
        (4, 1.25, "fig", True, datetime.datetime(2024, 1, 2, 0, 0, 0)),
    ]


SCHEMA = DataTypes.ROW([
    DataTypes.FIELD("id", DataTypes.BIGINT()),
    DataTypes.FIELD("price", DataTypes.DOUBLE()),
    DataTypes.FIELD("name", DataTypes.STRING()),
    DataTypes.FIELD("ok", DataTypes.BOOLEAN()),
    DataTypes.FIELD("ts", DataTypes.TIMESTAMP(3)),
])


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "1")
    t = t_env.from_elements(rows(), SCHEMA)
    t.select(
        dtype_of(col("id")).alias("id_t"), dtype_of(col("price")).alias("price_t"),
        dtype_of(col("name")).alias("name_t"), dtype_of(col("ok")).alias("ok_t"),
        dtype_of(col("ts")).alias("ts_t"),
    ).execute().print()
    t.select(
        col("id"), plus_one(col("id")).alias("p1"), (col("id") * 10).alias("x10"),
        general_double(col("id")).alias("g2"), scaled(col("price"), col("id")).alias("total"),
        shout(col("name")).alias("loud"),
    ).execute().print()
    t.select(
        col("id"),
        general_double(plus_one(col("id"))).alias("g_of_p"),
        plus_one(general_double(col("id"))).alias("p_of_g"),
        plus_one(plus_one(col("id"))).alias("p_of_p"),
        (plus_one(col("id")) + lit(100)).alias("p_plus"),
    ).execute().print()
    t.add_columns(shout(col("name")).alias("loud")).drop_columns(col("ts")).execute().print()

    s_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    s_env.get_config().set("parallelism.default", "1")
    s = s_env.from_elements(rows(), SCHEMA)
    s.select(col("name"), plus_one(col("id")).alias("p1"), scaled(col("price"), lit(2.0)).alias("twice")) \
        .execute().print()


if __name__ == "__main__":
    main()
