"""A function applied to arguments of the wrong type fails at validation."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.create_temporary_view("t", t_env.from_elements([(1, "a")], ["id", "name"]))
    t_env.execute_sql("SELECT SUBSTRING(id, name) FROM t").print()


if __name__ == "__main__":
    main()
