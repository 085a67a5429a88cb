"""A tumbling window over event time drops rows that arrive after the watermark passed their window."""
import os
import tempfile

from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    path = tempfile.mkdtemp()
    # seconds of event time, in arrival order; 3 and 4 arrive after the watermark passed 10 s
    seconds = [1, 2, 8, 15, 3, 12, 25, 4, 21, 33]
    with open(os.path.join(path, "events.csv"), "w") as f:
        f.writelines(f"{s},2024-01-01 00:00:{s:02d}\n" for s in seconds)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.execute_sql(f"""
        CREATE TABLE events (
            s INT,
            ts TIMESTAMP(3),
            WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
        ) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')
    """)
    t_env.execute_sql("""
        SELECT window_start, window_end, COUNT(*) AS n, SUM(s) AS total
        FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND))
        GROUP BY window_start, window_end
    """).print()


if __name__ == "__main__":
    main()
