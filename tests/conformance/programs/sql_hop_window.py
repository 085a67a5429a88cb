"""HOP (sliding) window TVF: each row counts in size/slide windows."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("table.local-time-zone", "UTC")
    t_env.execute_sql("""
        CREATE TABLE readings (
            id BIGINT,
            v AS id * 1.5,
            ts AS TO_TIMESTAMP_LTZ(id * 1000, 3),
            WATERMARK FOR ts AS ts
        ) WITH (
            'connector' = 'datagen', 'fields.id.kind' = 'sequence',
            'fields.id.start' = '0', 'fields.id.end' = '11'
        )
    """)
    t_env.execute_sql("""
        SELECT window_start, window_end, COUNT(*) AS n, MAX(v) AS top
        FROM TABLE(HOP(TABLE readings, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND))
        GROUP BY window_start, window_end
    """).print()


if __name__ == "__main__":
    main()
