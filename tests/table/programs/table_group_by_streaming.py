from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col

t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
t_env.get_config().set("parallelism.default", "1")
sales = t_env.from_elements(
    [
        ("books", 12, 2.5),
        ("games", 30, 10.0),
        ("books", 8, 1.5),
        ("books", 5, 4.0),
        ("games", 10, 2.0),
        ("toys", 7, None),
    ],
    ["category", "units", "price"],
)
sales.group_by(col("category")).select(
    col("category"),
    col("units").sum.alias("total"),
    col("units").count.alias("n"),
    col("units").min.alias("lo"),
    col("units").max.alias("hi"),
    col("units").avg.alias("mean"),
    col("price").avg.alias("avg_price"),
).execute().print()
sales.select(col("units").sum.alias("all_units"), col("price").max.alias("top")).execute().print()
sales.group_by(col("category")).select(col("category"), col("units").count.alias("n")).where(
    col("n") > 1
).execute().print()
