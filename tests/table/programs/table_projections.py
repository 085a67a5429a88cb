from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col, concat, if_then_else, lit

t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
t_env.get_config().set("parallelism.default", "1")
orders = t_env.from_elements(
    [(1, "apple", 3, 1.25), (2, "Banana", 1, 0.5), (3, "cherry pie", 12, 10.0), (4, None, 0, None)],
    ["id", "product", "amount", "price"],
)
orders.print_schema()
orders.select(
    col("id"),
    col("product").upper_case.alias("upper"),
    col("product").char_length,
    (col("amount") * col("price")).alias("total"),
    col("amount") / 2,
    col("amount") % 5,
    col("id") + 10,
    col("product").is_null,
).execute().print()
orders.where((col("amount") > 0) & (col("price") < 5)).select(col("id"), col("product")).execute().print()
orders.filter(col("product").like("%an%")).execute().print()
orders.add_columns(concat(col("product"), lit("!")).alias("shout")).drop_columns(
    col("price")
).execute().print()
orders.rename_columns(col("product").alias("item")).select(col("item"), col("id")).execute().print()
orders.select(
    col("id"),
    if_then_else(col("amount") >= 3, "many", "few").alias("size"),
    col("product").substring(1, 3).alias("head"),
    col("amount").between(1, 3).alias("small"),
    col("id").in_(1, 4).alias("edge"),
    col("price").cast(DataTypes.INT()),
    col("id").cast(DataTypes.STRING()),
).execute().print()
orders.alias("a", "b", "c", "d").select(col("a"), col("d")).execute().print()
t_env.from_elements([(1, "x"), (1, "x"), (2, "y")], ["k", "v"]).distinct().execute().print()
