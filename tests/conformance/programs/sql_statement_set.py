"""A StatementSet with two INSERT INTOs runs as one job; each sink gets its own rows."""
import os
import tempfile

from pyflink.table import EnvironmentSettings, TableEnvironment


def read_lines(path):
    lines = []
    for root, _, files in os.walk(path):
        for name in files:
            if not name.startswith("."):
                with open(os.path.join(root, name)) as f:
                    lines.extend(f.read().splitlines())
    return sorted(lines)


def main():
    small, large = tempfile.mkdtemp(), tempfile.mkdtemp()
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.create_temporary_view("src", t_env.from_elements(
        [(1, 5), (2, 50), (3, 7), (4, 70), (5, 500)], ["id", "v"]))
    for name, path in (("small_values", small), ("large_values", large)):
        t_env.execute_sql(f"""
            CREATE TABLE {name} (id BIGINT, v BIGINT)
            WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')
        """)
    statements = t_env.create_statement_set()
    statements.add_insert_sql("INSERT INTO small_values SELECT id, v FROM src WHERE v < 10")
    statements.add_insert_sql("INSERT INTO large_values SELECT id, v FROM src WHERE v >= 10")
    statements.execute().wait()
    print("small", read_lines(small))
    print("large", read_lines(large))


if __name__ == "__main__":
    main()
