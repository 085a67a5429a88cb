"""A SQL syntax error is reported by the parser with the offending token's line and column."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.create_temporary_view("t", t_env.from_elements([(1, "a")], ["id", "name"]))
    t_env.execute_sql("SELECT id name, FROM t WHERE").print()


if __name__ == "__main__":
    main()
