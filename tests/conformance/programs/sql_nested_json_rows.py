"""Nested json as users read it: a ROW column (written ROW<..> across lines, and ROW(..)), an ARRAY
of ROWs and a MAP, fields taken with p.name / t.p.name in SQL and get() in the Table API, a missing
field NULL, and the nested values written back out as json."""
import os
import tempfile

from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col


def main():
    path = tempfile.mkdtemp()
    with open(os.path.join(path, "events.json"), "w") as f:
        f.write('{"id":1,"user":{"name":"ann","age":31},"tags":[{"k":"a","v":1}],"attrs":{"x":"1"}}\n')
        f.write('{"id":2,"user":{"name":"bob"},"tags":[],"attrs":{}}\n')
        f.write('{"id":3,"user":null,"tags":[{"k":"b","v":2},{"k":"c","v":3}],"attrs":{"y":"2"}}\n')
    out = tempfile.mkdtemp()
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql(f"""
        CREATE TABLE events (
            id INT,
            `user` ROW<
                name STRING,
                age INT
            >,
            tags ARRAY<ROW(k STRING, v INT)>,
            attrs MAP<STRING, STRING>
        ) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json')
    """)
    t_env.from_path("events").print_schema()
    t_env.execute_sql("""
        SELECT id, `user`.name, events.`user`.age + 1 AS next_age, `user`, CARDINALITY(tags) AS n
        FROM events ORDER BY id
    """).print()
    t_env.from_path("events").select(
        col("id"), col("user").get("name"), col("user").get(1).alias("age")
    ).order_by(col("id")).execute().print()
    t_env.execute_sql(f"""
        CREATE TABLE copy (id INT, `user` ROW<name STRING, age INT>, attrs MAP<STRING, STRING>)
        WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json')
    """)
    t_env.execute_sql("INSERT INTO copy SELECT id, `user`, attrs FROM events WHERE id < 3").wait()
    lines = []
    for root, _, files in os.walk(out):
        for name in files:
            if not name.startswith("."):
                with open(os.path.join(root, name)) as f:
                    lines.extend(f.read().splitlines())
    for line in sorted(lines):
        print(line)


if __name__ == "__main__":
    main()
