"""Window TVF rows without aggregation (each row once per window, late rows kept), a window
aggregation in batch mode (no watermark drops rows there), and the Table API's names for unaliased
window properties and aggregates."""
import os
import tempfile

from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col, lit
from pyflink.table.window import Tumble


def create_events(t_env, path):
    t_env.execute_sql(f"""
        CREATE TABLE events (
            s INT,
            ts TIMESTAMP(3),
            WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
        ) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')
    """)


def main():
    path = tempfile.mkdtemp()
    seconds = [1, 2, 8, 15, 3, 12, 25, 4, 21, 33]
    with open(os.path.join(path, "events.csv"), "w") as f:
        f.writelines(f"{s},2024-01-01 00:00:{s:02d}\n" for s in seconds)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    create_events(t_env, path)
    t_env.execute_sql("""
        SELECT s, window_start, window_end, window_time
        FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND))
    """).print()
    t_env.execute_sql("""
        SELECT s, window_start, window_end
        FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
        WHERE s > 20
    """).print()
    windowed = t_env.from_path("events") \
        .window(Tumble.over(lit(10).seconds).on(col("ts")).alias("w")) \
        .group_by(col("w")) \
        .select(col("w").start, col("s").count, col("s").sum.alias("total"))
    print(windowed.get_schema())
    windowed.execute().print()

    b_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    create_events(b_env, path)
    b_env.execute_sql("""
        SELECT window_start, window_end, COUNT(*) AS n, SUM(s) AS total
        FROM TABLE(CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
        GROUP BY window_start, window_end
    """).print()


if __name__ == "__main__":
    main()
