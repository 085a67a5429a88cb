"""Table API group windows on event time: Tumble, Slide and Session with w.start / w.end."""
from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col, lit
from pyflink.table.window import Session, Slide, Tumble


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("table.local-time-zone", "UTC")
    t_env.execute_sql("""
        CREATE TABLE ticks (
            id BIGINT,
            sym AS IF(MOD(id, 2) = 0, 'EVEN', 'ODD'),
            px AS id * 2,
            ts AS TO_TIMESTAMP_LTZ(IF(id < 8, id, id + 20) * 1000, 3),
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
                col("px").sum.alias("total")) \
        .execute().print()
    ticks.window(Slide.over(lit(10).seconds).every(lit(5).seconds).on(col("ts")).alias("w")) \
        .group_by(col("w")) \
        .select(col("w").start, col("w").end, col("id").count.alias("n")) \
        .execute().print()
    ticks.window(Session.with_gap(lit(3).seconds).on(col("ts")).alias("w")) \
        .group_by(col("w"), col("sym")) \
        .select(col("sym"), col("w").start, col("w").end, col("id").count.alias("n")) \
        .execute().print()


if __name__ == "__main__":
    main()
