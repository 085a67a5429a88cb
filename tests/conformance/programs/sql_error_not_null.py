"""A NULL written into a sink's NOT NULL column fails the job with Flink's enforcer message (the
default of table.exec.sink.not-null-enforcer is ERROR)."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql("CREATE TABLE q (a INT NOT NULL, b STRING) WITH ('connector' = 'print')")
    t_env.execute_sql(
        "INSERT INTO q SELECT * FROM (VALUES (1, 'x'), (CAST(NULL AS INT), 'y')) AS v(a, b)"
    ).wait()


if __name__ == "__main__":
    main()
