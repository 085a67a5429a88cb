"""Columns of the same name from both sides of a join: the result names them v, v0, v1 (Calcite's rule),
for SELECT *, l.*, r.* and explicit lists alike."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.create_temporary_view("l", t_env.from_elements([(1, "a", 10), (2, "b", 20)], ["k", "v", "w"]))
    t_env.create_temporary_view("r", t_env.from_elements([(1, "x", 30), (3, "z", 40)], ["k", "v", "w"]))
    for query in [
        "SELECT * FROM l JOIN r ON l.k = r.k",
        "SELECT l.k, l.v, r.v, r.v FROM l JOIN r ON l.k = r.k",
        "SELECT r.*, l.w AS w FROM l JOIN r ON l.k = r.k",
        "SELECT v, v, UPPER(v), UPPER(v) FROM l WHERE k = 2",
    ]:
        t_env.execute_sql(query).print()


if __name__ == "__main__":
    main()
