"""Top-N in batch mode with RANK() and DENSE_RANK(): rows that tie share a rank; RANK leaves gaps."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "1")
    scores = t_env.from_elements(
        [("ann", "math", 90), ("bob", "math", 85), ("cid", "math", 85), ("dan", "math", 70),
         ("eve", "math", 60), ("ann", "art", 75), ("bob", "art", 75), ("cid", "art", 75),
         ("dan", "art", 50)],
        ["name", "subject", "score"])
    t_env.create_temporary_view("scores", scores)
    for fn in ("RANK", "DENSE_RANK", "ROW_NUMBER"):
        print(fn)
        t_env.execute_sql(f"""
            SELECT subject, name, score, rk FROM (
                SELECT *, {fn}() OVER (PARTITION BY subject ORDER BY score DESC) AS rk FROM scores
            ) WHERE rk <= 3 ORDER BY subject, rk, name
        """).print()
    t_env.execute_sql("""
        SELECT subject, name FROM (
            SELECT *, DENSE_RANK() OVER (PARTITION BY subject ORDER BY score) AS rk FROM scores
        ) WHERE rk = 2 ORDER BY subject, name
    """).print()


if __name__ == "__main__":
    main()
