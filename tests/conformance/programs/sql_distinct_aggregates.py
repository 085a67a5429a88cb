"""COUNT(DISTINCT ...), SUM(DISTINCT ...) and SELECT DISTINCT in streaming mode."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.create_temporary_view("visits", t_env.from_elements(
        [("home", "alice", 1), ("home", "bob", 2), ("home", "alice", 1), ("shop", "alice", 5),
         ("shop", "alice", 5), ("shop", "carol", 2)],
        ["page", "visitor", "points"]))
    t_env.execute_sql("""
        SELECT page, COUNT(DISTINCT visitor) AS visitors, SUM(DISTINCT points) AS distinct_points,
               COUNT(*) AS hits
        FROM visits GROUP BY page
    """).print()
    t_env.execute_sql("SELECT DISTINCT visitor FROM visits").print()


if __name__ == "__main__":
    main()
