from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col


def tables(settings):
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", "1")
    orders = t_env.from_elements(
        [(1, "u1", 10), (2, "u2", 25), (3, "u1", 5), (4, "u9", 7)], ["oid", "uid", "amount"]
    )
    users = t_env.from_elements([("u1", "Ann"), ("u2", "Ben"), ("u3", "Cyd")], ["id", "name"])
    t_env.create_temporary_view("orders", orders)
    t_env.create_temporary_view("users", users)
    return t_env, orders, users


# streaming: inner joins of insert-only inputs give the same rows whatever order the inputs arrive in
t_env, orders, users = tables(EnvironmentSettings.in_streaming_mode())
orders.join(users, col("uid") == col("id")).select(col("oid"), col("name"), col("amount")).execute().print()
orders.join(users, (col("uid") == col("id")) & (col("amount") > 6)).select(
    col("oid"), col("name")
).execute().print()
t_env.sql_query(
    "SELECT o.oid, u.name, o.amount FROM orders AS o JOIN users AS u ON o.uid = u.id WHERE o.amount > 5"
).execute().print()
orders.union_all(orders).select(col("oid"), col("uid")).execute().print()

# batch: outer joins and aggregates over joins give their final rows only
t_env, orders, users = tables(EnvironmentSettings.in_batch_mode())
orders.left_outer_join(users, col("uid") == col("id")).select(col("oid"), col("name")).execute().print()
t_env.sql_query(
    "SELECT u.name, COUNT(o.oid) AS n, SUM(o.amount) AS total "
    "FROM users u LEFT JOIN orders o ON u.id = o.uid GROUP BY u.name"
).execute().print()
orders.union_all(orders).group_by(col("uid")).select(
    col("uid"), col("amount").sum.alias("s")
).execute().print()
t_env.sql_query("SELECT uid FROM orders UNION SELECT id FROM users").execute().print()
