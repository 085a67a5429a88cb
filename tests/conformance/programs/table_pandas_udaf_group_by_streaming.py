"""A vectorized (pandas) aggregate in a streaming non-windowed group by: PyFlink refuses it."""
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col
from pyflink.table.udf import udaf


@udaf(result_type=DataTypes.DOUBLE(), func_type="pandas")
def mean(v):
    return v.mean()


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t = t_env.from_elements([("a", 1), ("a", 3), ("b", 2)], ["k", "v"])
    t.group_by(col("k")).select(col("k"), mean(col("v")).alias("m")).execute().print()


if __name__ == "__main__":
    main()
