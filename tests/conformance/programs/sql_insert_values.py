"""INSERT INTO ... VALUES as tutorials write it: all columns, a column list in another order, a
partial column list (the rest NULL), a NOT NULL column in DDL, and the sink's NOT NULL enforcer set
to DROP a row whose NOT NULL column is NULL. VALUES runs in one subtask, so print has no prefix."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql("CREATE TABLE people (id INT NOT NULL, name STRING, age INT NULL) WITH ('connector' = 'print')")
    t_env.from_path("people").print_schema()
    t_env.execute_sql("INSERT INTO people VALUES (1, 'ann', 31), (2, 'bob', 42)").wait()
    t_env.execute_sql("INSERT INTO people (name, id) VALUES ('cid', 3)").wait()
    t_env.execute_sql("INSERT INTO people (age, name, id) SELECT 50, 'dee', 4").wait()
    t_env.get_config().set("table.exec.sink.not-null-enforcer", "drop")
    t_env.execute_sql("""
        INSERT INTO people
        SELECT * FROM (VALUES (5, 'eve', 1), (CAST(NULL AS INT), 'nobody', 2), (6, 'fay', 3)) AS v(i, n, a)
    """).wait()
    t_env.execute_sql("SELECT * FROM (VALUES (1, 'a'), (2, CAST(NULL AS STRING))) AS v(x, y)").print()


if __name__ == "__main__":
    main()
