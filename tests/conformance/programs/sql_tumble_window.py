"""TUMBLE window TVF with a count and sum per key over event time (watermark declared in the DDL)."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("table.local-time-zone", "UTC")
    t_env.execute_sql("""
        CREATE TABLE bids (
            id BIGINT,
            item AS CONCAT('item-', CAST(MOD(id, 3) AS STRING)),
            price AS id * 10,
            ts AS TO_TIMESTAMP_LTZ(id * 1000, 3),
            WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
        ) WITH (
            'connector' = 'datagen', 'fields.id.kind' = 'sequence',
            'fields.id.start' = '0', 'fields.id.end' = '29'
        )
    """)
    t_env.execute_sql("""
        SELECT window_start, window_end, item, COUNT(*) AS bids, SUM(price) AS total
        FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
        GROUP BY window_start, window_end, item
    """).print()


if __name__ == "__main__":
    main()
