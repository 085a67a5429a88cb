"""TableResult.collect(): rows come back as Row objects with their row kinds."""
from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t = t_env.from_elements([("a", 1), ("b", 2), ("a", 3)], ["k", "v"])
    with t.select(col("k"), col("v") * 10).execute().collect() as results:
        rows = list(results)
    for row in sorted(rows, key=str):
        print(row, row.get_row_kind(), row[0], row[1])
    with t.group_by(col("k")).select(col("k"), col("v").sum.alias("s")).execute().collect() as results:
        changes = [(str(r.get_row_kind()), r[0], r[1]) for r in results]
    for change in sorted(changes):
        print(change)


if __name__ == "__main__":
    main()
