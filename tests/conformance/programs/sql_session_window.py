"""SESSION window TVF partitioned by key: gaps in event time close a session.

One source subtask: the watermark (ts - 10 s) advances row by row, so b's row at 6 s arrives
after the session [4 s, 9 s) closed and opens a session of its own."""
import os
import tempfile

from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    path = tempfile.mkdtemp()
    rows = [("a", "2024-01-01 00:00:01"), ("a", "2024-01-01 00:00:03"), ("b", "2024-01-01 00:00:04"),
            ("a", "2024-01-01 00:00:20"), ("b", "2024-01-01 00:00:06"), ("a", "2024-01-01 00:00:22")]
    with open(os.path.join(path, "clicks.csv"), "w") as f:
        f.writelines(f"{user},{ts}\n" for user, ts in rows)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql(f"""
        CREATE TABLE clicks (
            user_name STRING,
            ts TIMESTAMP(3),
            WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
        ) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')
    """)
    t_env.execute_sql("""
        SELECT user_name, window_start, window_end, COUNT(*) AS clicks
        FROM TABLE(SESSION(TABLE clicks PARTITION BY user_name, DESCRIPTOR(ts), INTERVAL '5' SECOND))
        GROUP BY user_name, window_start, window_end
    """).print()


if __name__ == "__main__":
    main()
