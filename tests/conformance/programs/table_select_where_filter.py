"""select with expressions (arithmetic, alias, cast, if_then_else), where and filter."""
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col, if_then_else, lit


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    people = t_env.from_elements(
        [("alice", 34, "Berlin"), ("bob", 17, "Paris"), ("carol", 51, "Berlin"), ("dave", None, "Rome")],
        ["name", "age", "city"])
    people.select(
        col("name").upper_case.alias("NAME"),
        (col("age") + 1).alias("next_age"),
        col("age").cast(DataTypes.STRING()).alias("age_str"),
        if_then_else(col("age") >= 18, "adult", "minor").alias("kind"),
        col("age").is_null.alias("unknown"),
    ).execute().print()
    people.where(col("city") == "Berlin").select(col("name")).execute().print()
    people.filter((col("age") < 40) & col("age").is_not_null) \
        .select(col("name"), col("age") * lit(2)).execute().print()


if __name__ == "__main__":
    main()
