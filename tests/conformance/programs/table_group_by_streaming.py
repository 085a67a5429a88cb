"""group_by().select() aggregates in streaming mode: an updating result with -U/+U retractions."""
from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    sales = t_env.from_elements(
        [("books", 10), ("games", 5), ("books", 7), ("books", 1), ("games", 20), ("food", 3)],
        ["category", "amount"])
    sales.group_by(col("category")).select(
        col("category"),
        col("amount").sum.alias("total"),
        col("amount").count.alias("cnt"),
        col("amount").max.alias("biggest"),
        col("amount").min.alias("smallest"),
    ).execute().print()


if __name__ == "__main__":
    main()
