"""group_by().select() aggregates in batch mode: one final row per group, avg included."""
from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    sales = t_env.from_elements(
        [("books", 10, 1.0), ("games", 5, 2.0), ("books", 7, 3.0), ("books", 1, 4.0), ("games", 20, 5.0)],
        ["category", "amount", "weight"])
    sales.group_by(col("category")).select(
        col("category"),
        col("amount").sum.alias("total"),
        col("amount").avg.alias("avg_amount"),
        col("weight").avg.alias("avg_weight"),
        col("amount").count.alias("cnt"),
    ).execute().print()
    sales.select(col("amount").sum.alias("all_amount"), col("category").count.alias("n")) \
        .execute().print()


if __name__ == "__main__":
    main()
