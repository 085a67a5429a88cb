"""Deduplication: ROW_NUMBER() ... ORDER BY proc/event time ASC keeps the first row per key."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("table.local-time-zone", "UTC")
    t_env.execute_sql("""
        CREATE TABLE logins (
            id BIGINT,
            user_name AS CONCAT('u', CAST(MOD(id, 3) AS STRING)),
            ts AS TO_TIMESTAMP_LTZ(id * 1000, 3),
            WATERMARK FOR ts AS ts
        ) WITH (
            'connector' = 'datagen', 'fields.id.kind' = 'sequence',
            'fields.id.start' = '1', 'fields.id.end' = '9'
        )
    """)
    t_env.execute_sql("""
        SELECT user_name, id, ts FROM (
            SELECT *, ROW_NUMBER() OVER (PARTITION BY user_name ORDER BY ts ASC) AS rn FROM logins
        ) WHERE rn = 1
    """).print()


if __name__ == "__main__":
    main()
