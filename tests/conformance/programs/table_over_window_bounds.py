"""Table API Over windows: the default (UNBOUNDED_RANGE), time ranges, row counts, unaliased calls."""
from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import CURRENT_ROW, UNBOUNDED_ROW, col, lit, row_interval
from pyflink.table.window import Over


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql("""
        CREATE TABLE readings (
            id BIGINT,
            sensor AS IF(MOD(id, 2) = 0, 'even', 'odd'),
            v AS CAST(MOD(id * 5, 7) AS INT),
            ts AS TO_TIMESTAMP_LTZ(id * 1000, 3),
            WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
        ) WITH (
            'connector' = 'datagen', 'fields.id.kind' = 'sequence',
            'fields.id.start' = '1', 'fields.id.end' = '9'
        )
    """)
    readings = t_env.from_path("readings")
    by_sensor = Over.partition_by(col("sensor")).order_by(col("ts"))

    readings.over_window(by_sensor.alias("w")) \
        .select(col("sensor"), col("id"), col("v").sum.over(col("w")), col("v").count.over(col("w")) * 10) \
        .execute().print()
    readings.over_window(by_sensor.preceding(lit(3).seconds).alias("w")) \
        .select(col("id"), col("v").min.over(col("w")).alias("min_3s"), col("v").max.over(col("w")).alias("max_3s")) \
        .execute().print()
    readings.over_window(Over.order_by(col("ts")).preceding(row_interval(2)).following(CURRENT_ROW).alias("w")) \
        .select(col("id"), col("v"), col("v").avg.over(col("w")).alias("avg_last3"),
                col("v").sum.over(col("w")).alias("sum_last3")) \
        .execute().print()
    readings.over_window(Over.partition_by(col("id") % 3).order_by(col("ts")).preceding(UNBOUNDED_ROW).alias("w")) \
        .select(col("id"), col("id") % 3, col("v").sum.over(col("w")).alias("running")) \
        .execute().print()


if __name__ == "__main__":
    main()
