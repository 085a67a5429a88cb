"""create_temporary_view of a Table and of a query, sql_query on them, from_path and dropping a view."""
from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.create_temporary_view("products", t_env.from_elements(
        [(1, "pen", 1.5), (2, "book", 12.0), (3, "lamp", 30.0)], ["id", "name", "price"]))
    cheap = t_env.sql_query("SELECT id, name FROM products WHERE price < 20")
    t_env.create_temporary_view("cheap", cheap)
    t_env.sql_query("SELECT UPPER(name) AS name FROM cheap").execute().print()
    t_env.from_path("cheap").select(col("id") * 100).execute().print()
    t_env.execute_sql("CREATE TEMPORARY VIEW pricey AS SELECT name FROM products WHERE price >= 20")
    t_env.execute_sql("SELECT * FROM pricey").print()
    print(sorted(t_env.list_temporary_views()))
    print(t_env.drop_temporary_view("cheap"))
    print(sorted(t_env.list_temporary_views()))


if __name__ == "__main__":
    main()
