"""EXPLAIN a query: only the plan's section headers are compared (the plans are each planner's own)."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.create_temporary_view("t", t_env.from_elements([(1, "a")], ["id", "v"]))
    plan = t_env.explain_sql("SELECT v, COUNT(*) FROM t WHERE id > 0 GROUP BY v")
    for line in plan.splitlines():
        if line.startswith("=="):
            print(line)
    table_plan = t_env.sql_query("SELECT id FROM t").explain()
    print(table_plan.splitlines()[0])
    rows = list(t_env.execute_sql("EXPLAIN PLAN FOR SELECT id FROM t").collect())
    print(len(rows), rows[0][0].splitlines()[0])


if __name__ == "__main__":
    main()
