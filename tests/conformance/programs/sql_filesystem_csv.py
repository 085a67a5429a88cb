"""A filesystem table in csv: INSERT INTO writes files, a second table reads them back."""
import os
import tempfile

from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    path = tempfile.mkdtemp()
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.create_temporary_view("src", t_env.from_elements(
        [(1, "alice", 3.5), (2, "bob, jr.", None), (3, 'say "hi"', 0.25)], ["id", "name", "score"]))
    t_env.execute_sql(f"""
        CREATE TABLE csv_out (id BIGINT, name STRING, score DOUBLE)
        WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv', 'csv.null-literal' = 'NULL')
    """)
    t_env.execute_sql("INSERT INTO csv_out SELECT * FROM src").wait()
    lines = []
    for root, _, files in os.walk(path):
        for name in files:
            if not name.startswith("."):
                with open(os.path.join(root, name)) as f:
                    lines.extend(f.read().splitlines())
    for line in sorted(lines):
        print(line)
    t_env.execute_sql(f"""
        CREATE TABLE csv_in (id BIGINT, name STRING, score DOUBLE)
        WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv', 'csv.null-literal' = 'NULL')
    """)
    t_env.execute_sql("SELECT id, name, score FROM csv_in ORDER BY id").print()


if __name__ == "__main__":
    main()
