"""INSERT INTO with fewer columns than the sink has is refused at validation."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql("CREATE TABLE sink (a INT, b STRING, c DOUBLE) WITH ('connector' = 'blackhole')")
    t_env.execute_sql("INSERT INTO sink SELECT 1, 'x'").wait()


if __name__ == "__main__":
    main()
