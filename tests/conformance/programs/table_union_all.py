"""union_all keeps duplicates, union removes them; SQL UNION ALL as well."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    left = t_env.from_elements([(1, "a"), (2, "b")], ["id", "v"])
    right = t_env.from_elements([(2, "b"), (3, "c")], ["id", "v"])
    left.union_all(right).execute().print()
    left.union(right).execute().print()
    t_env.create_temporary_view("l", left)
    t_env.create_temporary_view("r", right)
    t_env.execute_sql("SELECT id FROM l UNION ALL SELECT id FROM r UNION ALL SELECT 9").print()


if __name__ == "__main__":
    main()
