"""Inner, LEFT, RIGHT and FULL OUTER joins in SQL, batch mode."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.create_temporary_view("customers", t_env.from_elements(
        [(1, "alice"), (2, "bob"), (3, "carol")], ["cid", "name"]))
    t_env.create_temporary_view("orders", t_env.from_elements(
        [(100, 1, 9.5), (101, 1, 20.0), (102, 3, 4.25), (103, 4, 1.0)], ["oid", "cid", "amount"]))
    t_env.execute_sql("""
        SELECT c.name, o.oid, o.amount FROM customers c JOIN orders o ON c.cid = o.cid
    """).print()
    t_env.execute_sql("""
        SELECT c.name, o.oid FROM customers c LEFT JOIN orders o ON c.cid = o.cid
    """).print()
    t_env.execute_sql("""
        SELECT c.name, o.oid FROM customers c RIGHT JOIN orders o ON c.cid = o.cid
    """).print()
    t_env.execute_sql("""
        SELECT c.cid AS c_cid, o.cid AS o_cid, o.oid FROM customers c FULL OUTER JOIN orders o ON c.cid = o.cid
    """).print()
    t_env.execute_sql("""
        SELECT c.name, SUM(o.amount) AS spent FROM customers c JOIN orders o ON c.cid = o.cid
        WHERE o.amount > 5 GROUP BY c.name
    """).print()


if __name__ == "__main__":
    main()
