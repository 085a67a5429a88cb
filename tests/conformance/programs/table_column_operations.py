"""add_columns, add_or_replace_columns, rename_columns and drop_columns."""
from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col, concat


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t = t_env.from_elements([(1, "a", 10), (2, "b", 20)], ["id", "tag", "amount"])
    t = t.add_columns(concat(col("tag"), "_x").alias("tag2"), (col("amount") / 10).alias("tens"))
    t.execute().print()
    t = t.add_or_replace_columns((col("amount") + 1).alias("amount"))
    t.execute().print()
    t = t.rename_columns(col("tag").alias("label"), col("id").alias("key"))
    t.drop_columns(col("tag2"), col("tens")).execute().print()
    t.print_schema()


if __name__ == "__main__":
    main()
