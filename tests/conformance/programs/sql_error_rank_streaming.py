"""RANK() in a streaming Top-N: Flink's planner refuses it (only ROW_NUMBER() is supported there)."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.create_temporary_view(
        "scores", t_env.from_elements([("ann", 90), ("bob", 85)], ["name", "score"]))
    t_env.execute_sql("""
        SELECT name, score FROM (
            SELECT *, RANK() OVER (ORDER BY score DESC) AS rk FROM scores
        ) WHERE rk <= 1
    """).print()


if __name__ == "__main__":
    main()
