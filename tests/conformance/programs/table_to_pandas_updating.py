"""to_pandas() of an updating (streaming GROUP BY) table: the rows its changelog ends with."""
from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    orders = t_env.from_elements([(1, "a"), (2, "b"), (3, "a"), (4, "c"), (5, "b")], ["amount", "customer"])
    totals = orders.group_by(col("customer")).select(col("customer"), col("amount").sum.alias("total"))
    df = totals.to_pandas()
    print(df.to_string())
    print(list(df.dtypes.astype(str)))
    per_count = totals.group_by(col("total")).select(col("total"), col("customer").count.alias("customers"))
    print(per_count.to_pandas().to_string())


if __name__ == "__main__":
    main()
