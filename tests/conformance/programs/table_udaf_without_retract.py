"""A Python AggregateFunction without retract cannot aggregate an updating input."""
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col
from pyflink.table.udf import AggregateFunction, udaf


class SumOnly(AggregateFunction):
    def create_accumulator(self):
        return [0]

    def accumulate(self, accumulator, value):
        accumulator[0] += value

    def get_value(self, accumulator):
        return accumulator[0]


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    sum_only = udaf(SumOnly(), result_type=DataTypes.BIGINT(),
                    accumulator_type=DataTypes.ARRAY(DataTypes.BIGINT()))
    src = t_env.from_elements([("a", 1), ("b", 2), ("a", 3)], ["k", "v"])
    totals = src.group_by(col("k")).select(col("k"), col("v").sum.alias("total"))
    totals.select(sum_only(col("total")).alias("s")).execute().print()


if __name__ == "__main__":
    main()
