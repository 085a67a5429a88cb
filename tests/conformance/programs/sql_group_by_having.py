"""GROUP BY with HAVING in streaming mode: rows appear, update and disappear (-D) as HAVING flips."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.create_temporary_view("clicks", t_env.from_elements(
        [("alice", 1), ("bob", 1), ("alice", 1), ("carol", 1), ("alice", 1), ("bob", 1)],
        ["user_name", "n"]))
    t_env.execute_sql("""
        SELECT user_name, COUNT(*) AS cnt, SUM(n) AS total
        FROM clicks GROUP BY user_name HAVING COUNT(*) >= 2
    """).print()


if __name__ == "__main__":
    main()
