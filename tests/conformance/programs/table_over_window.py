"""Table API Over windows: Over.partition_by().order_by().preceding(UNBOUNDED_ROW)."""
from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import UNBOUNDED_ROW, col, lit
from pyflink.table.window import Over


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql("""
        CREATE TABLE temps (
            id BIGINT,
            city AS IF(id <= 4, 'oslo', 'rome'),
            celsius AS CAST(MOD(id * 7, 11) AS INT),
            ts AS TO_TIMESTAMP_LTZ(id * 1000, 3),
            WATERMARK FOR ts AS ts
        ) WITH (
            'connector' = 'datagen', 'fields.id.kind' = 'sequence',
            'fields.id.start' = '1', 'fields.id.end' = '8'
        )
    """)
    t_env.from_path("temps") \
        .over_window(Over.partition_by(col("city")).order_by(col("ts")).preceding(UNBOUNDED_ROW).alias("w")) \
        .select(col("city"), col("id"), col("celsius"),
                col("celsius").max.over(col("w")).alias("max_so_far"),
                col("celsius").avg.over(col("w")).alias("avg_so_far"),
                (col("celsius") + lit(0)).count.over(col("w")).alias("n")) \
        .execute().print()


if __name__ == "__main__":
    main()
