"""SQL SELECT ... WHERE over a view made from elements; ORDER BY ... LIMIT in batch mode."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.create_temporary_view("people", t_env.from_elements(
        [("alice", 34, "Berlin"), ("bob", 17, "Paris"), ("carol", 51, "Berlin"), ("dave", 29, "Rome")],
        ["name", "age", "city"]))
    t_env.sql_query("SELECT name, age FROM people WHERE city = 'Berlin' AND age > 30").execute().print()
    t_env.execute_sql("SELECT name, age * 2 AS doubled FROM people WHERE age BETWEEN 18 AND 40").print()
    t_env.execute_sql("SELECT name FROM people WHERE name LIKE '%o%' OR city IN ('Rome')").print()
    t_env.execute_sql("SELECT name, age FROM people ORDER BY age DESC LIMIT 2").print()


if __name__ == "__main__":
    main()
