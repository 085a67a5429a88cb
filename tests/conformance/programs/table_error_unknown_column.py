"""The Table API's col() of a missing field fails when the expression is resolved."""
from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t = t_env.from_elements([(1, "a")], ["id", "name"])
    t.select(col("id"), col("nope")).execute().print()


if __name__ == "__main__":
    main()
