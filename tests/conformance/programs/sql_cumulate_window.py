"""CUMULATE window TVF: windows that grow by a step up to their max size."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("table.local-time-zone", "UTC")
    t_env.execute_sql("""
        CREATE TABLE sales (
            id BIGINT,
            amount AS id + 1,
            ts AS TO_TIMESTAMP_LTZ(id * 1000, 3),
            WATERMARK FOR ts AS ts
        ) WITH (
            'connector' = 'datagen', 'fields.id.kind' = 'sequence',
            'fields.id.start' = '0', 'fields.id.end' = '9'
        )
    """)
    t_env.execute_sql("""
        SELECT window_start, window_end, SUM(amount) AS running_total, COUNT(*) AS n
        FROM TABLE(CUMULATE(TABLE sales, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND))
        GROUP BY window_start, window_end
    """).print()


if __name__ == "__main__":
    main()
