"""A filesystem table in json, partitioned by a column: written, then read back with the partition."""
import os
import tempfile

from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    path = tempfile.mkdtemp()
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.create_temporary_view("src", t_env.from_elements(
        [(1, "alice", "de"), (2, "bob", "fr"), (3, "carol", "de"), (4, None, "it")],
        ["id", "name", "country"]))
    t_env.execute_sql(f"""
        CREATE TABLE people (id BIGINT, name STRING, country STRING)
        PARTITIONED BY (country)
        WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json')
    """)
    t_env.execute_sql("INSERT INTO people SELECT * FROM src").wait()
    lines = []
    for root, _, files in os.walk(path):
        for name in files:
            if not name.startswith("."):
                with open(os.path.join(root, name)) as f:
                    partition = os.path.relpath(root, path)
                    lines.extend(f"{partition} {line}" for line in f.read().splitlines())
    for line in sorted(lines):
        print(line)
    t_env.execute_sql("SELECT * FROM people WHERE country = 'de' ORDER BY id").print()
    t_env.execute_sql("SELECT country, COUNT(*) AS n FROM people GROUP BY country ORDER BY country").print()


if __name__ == "__main__":
    main()
