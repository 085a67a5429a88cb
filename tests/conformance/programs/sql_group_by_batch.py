"""GROUP BY with HAVING and ORDER BY in batch mode: final rows only."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.create_temporary_view("orders", t_env.from_elements(
        [("books", "alice", 12.5), ("games", "bob", 60.0), ("books", "bob", 7.5),
         ("food", "carol", 3.2), ("books", "carol", 20.0), ("games", "alice", 15.0)],
        ["category", "customer", "price"]))
    t_env.execute_sql("""
        SELECT category, COUNT(*) AS cnt, SUM(price) AS revenue, MIN(price) AS cheapest, AVG(price) AS mean
        FROM orders GROUP BY category HAVING SUM(price) > 10 ORDER BY revenue DESC
    """).print()


if __name__ == "__main__":
    main()
