"""A query naming a column the table does not have fails at validation, before any job runs."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.create_temporary_view("t", t_env.from_elements([(1, "a")], ["id", "name"]))
    t_env.execute_sql("SELECT id, nme FROM t").print()


if __name__ == "__main__":
    main()
