"""VALUES as a table: column types as Calcite infers them (VARCHAR of the longest string, NOT NULL),
EXPR$n names unless the alias names the columns, expressions evaluated, a typed NULL."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "1")
    for query in [
        "SELECT * FROM (VALUES (1, 'a', 2.5, TRUE), (2, 'bb', CAST(NULL AS DOUBLE), FALSE)) AS t(x, s, d, b)",
        "SELECT COUNT(*) FROM (VALUES (1)) AS t(x)",
        "SELECT * FROM (VALUES (1, 'a'), (-2, 'ccc'))",
        "SELECT x + 1 AS y, UPPER(s) AS u FROM (VALUES (1, 'xy'), (2000000000, 'z')) AS t(x, s)",
    ]:
        table = t_env.sql_query(query)
        table.print_schema()
        table.execute().print()
    try:
        t_env.sql_query("SELECT * FROM (VALUES (1, NULL)) AS t(a, b)")
    except Exception as e:
        print("refused:", "Illegal use of 'NULL'" in str(e))


if __name__ == "__main__":
    main()
