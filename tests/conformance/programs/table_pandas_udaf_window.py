"""Vectorized (pandas) aggregate functions: a group's values arrive as pandas.Series and the
function returns one value; batch group by, Tumble/Slide group windows (PyFlink refuses Session ones),
(PyFlink refuses them in SQL window TVF aggregates; flott does not yet)."""
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col, lit
from pyflink.table.udf import udaf
from pyflink.table.window import Slide, Tumble


@udaf(result_type=DataTypes.DOUBLE(), func_type="pandas")
def mean(v):
    return v.mean()


@udaf(result_type=DataTypes.BIGINT(), func_type="pandas")
def spread(v):
    return int(v.max() - v.min())


@udaf(result_type=DataTypes.BIGINT(), func_type="pandas")
def weighted(v, w):
    return int((v * w).sum())


def main():
    b_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    b_env.get_config().set("parallelism.default", "1")
    sales = b_env.from_elements(
        [("books", 12, 2), ("games", 30, 1), ("books", 8, 3), ("books", 5, 1), ("games", 10, 2)],
        ["category", "units", "qty"],
    )
    sales.group_by(col("category")).select(
        col("category"), mean(col("units")).alias("mean"), spread(col("units")).alias("spread"),
        weighted(col("units"), col("qty")).alias("w"),
    ).execute().print()
    b_env.create_temporary_function("mean", mean)
    b_env.create_temporary_view("sales", sales)
    b_env.execute_sql("SELECT category, mean(units) AS m FROM sales GROUP BY category").print()

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("table.local-time-zone", "UTC")
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql("""
        CREATE TABLE ticks (
            id BIGINT,
            sym AS IF(MOD(id, 2) = 0, 'EVEN', 'ODD'),
            px AS id * 2,
            ts AS TO_TIMESTAMP(FROM_UNIXTIME(IF(id < 8, id, id + 20))),
            WATERMARK FOR ts AS ts
        ) WITH (
            'connector' = 'datagen', 'fields.id.kind' = 'sequence',
            'fields.id.start' = '0', 'fields.id.end' = '11'
        )
    """)
    ticks = t_env.from_path("ticks")
    ticks.window(Tumble.over(lit(5).seconds).on(col("ts")).alias("w")) \
        .group_by(col("w"), col("sym")) \
        .select(col("sym"), col("w").start.alias("w_start"), col("w").end.alias("w_end"),
                mean(col("px")).alias("m"), spread(col("px")).alias("s")) \
        .execute().print()
    ticks.window(Slide.over(lit(10).seconds).every(lit(5).seconds).on(col("ts")).alias("w")) \
        .group_by(col("w")) \
        .select(col("w").start, col("w").end, spread(col("id")).alias("s")) \
        .execute().print()


if __name__ == "__main__":
    main()
