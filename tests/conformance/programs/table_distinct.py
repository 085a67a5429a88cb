"""distinct() in streaming mode on an append-only input emits only first occurrences."""
from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t = t_env.from_elements(
        [("a", 1), ("b", 2), ("a", 1), ("c", 3), ("b", 2), ("a", 4)], ["k", "v"])
    t.distinct().execute().print()
    t.select(col("k")).distinct().execute().print()


if __name__ == "__main__":
    main()
