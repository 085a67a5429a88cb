"""OVER aggregations: a running sum per key over event time (ROWS and RANGE frames)."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("table.local-time-zone", "UTC")
    t_env.execute_sql("""
        CREATE TABLE payments (
            id BIGINT,
            account AS IF(MOD(id, 2) = 0, 'acc-0', 'acc-1'),
            amount AS id * 5,
            ts AS TO_TIMESTAMP_LTZ(id * 1000, 3),
            WATERMARK FOR ts AS ts
        ) WITH (
            'connector' = 'datagen', 'fields.id.kind' = 'sequence',
            'fields.id.start' = '1', 'fields.id.end' = '10'
        )
    """)
    t_env.execute_sql("""
        SELECT account, id, amount,
               SUM(amount) OVER w AS running_total,
               COUNT(*) OVER w AS n
        FROM payments
        WINDOW w AS (PARTITION BY account ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
    """).print()
    t_env.execute_sql("""
        SELECT account, id,
               COUNT(*) OVER (PARTITION BY account ORDER BY ts
                              RANGE BETWEEN INTERVAL '4' SECOND PRECEDING AND CURRENT ROW) AS recent
        FROM payments
    """).print()

if __name__ == "__main__":
    main()
