"""CAST, TRY_CAST, COALESCE, NULLIF, ABS, MOD, ROUND, FLOOR, CEIL, CASE WHEN and IF in SQL."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.create_temporary_view("nums", t_env.from_elements(
        [(1, -7, "42", 2.5), (2, None, "x", -3.75), (3, 10, None, 0.0)], ["id", "n", "s", "d"]))
    t_env.execute_sql("""
        SELECT id,
               CAST(id AS STRING) AS id_str,
               TRY_CAST(s AS INT) AS s_int,
               CAST(d AS INT) AS d_int,
               COALESCE(n, 0) AS n0,
               NULLIF(id, 2) AS not_two,
               ABS(n) AS abs_n,
               MOD(n, 3) AS mod_n,
               ROUND(d, 1) AS rounded,
               FLOOR(d) AS floored,
               CEIL(d) AS ceiled,
               CASE WHEN n IS NULL THEN 'none' WHEN n < 0 THEN 'neg' ELSE 'pos' END AS sign,
               IF(id > 1, 'big', 'small') AS size,
               POWER(id, 2) AS sq
        FROM nums
    """).print()


if __name__ == "__main__":
    main()
