"""Selecting from a table that was never created fails at validation."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql("SELECT * FROM missing_table").print()


if __name__ == "__main__":
    main()
