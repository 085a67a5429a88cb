"""A TableEnvironment in batch mode: print() shows rows without the changelog column."""
from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    orders = t_env.from_elements(
        [("apple", 3, 0.5), ("pear", 1, 0.75), ("apple", 2, 0.5), ("plum", 10, 0.2)],
        ["fruit", "amount", "price"])
    orders.select(col("fruit"), (col("amount") * col("price")).alias("total")) \
        .execute().print()


if __name__ == "__main__":
    main()
