"""A Python AggregateFunction with retract over an updating input (an aggregate of a group
aggregate's result), in the Table API and SQL; bundle size 1 so PyFlink emits every change."""
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col
from pyflink.table.udf import AggregateFunction, udaf


class SumWithRetract(AggregateFunction):
    def create_accumulator(self):
        return [0, 0]

    def accumulate(self, accumulator, value):
        accumulator[0] += value
        accumulator[1] += 1

    def retract(self, accumulator, value):
        accumulator[0] -= value
        accumulator[1] -= 1

    def get_value(self, accumulator):
        return accumulator[0]


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.get_config().set("python.fn-execution.bundle.size", "1")
    my_sum = udaf(SumWithRetract(), result_type=DataTypes.BIGINT(),
                  accumulator_type=DataTypes.ARRAY(DataTypes.BIGINT()))
    src = t_env.from_elements([("a", 1), ("b", 2), ("a", 3), ("c", 4)], ["k", "v"])
    totals = src.group_by(col("k")).select(col("k"), col("v").sum.alias("total"))
    totals.group_by(col("total")).select(col("total"), my_sum(col("total")).alias("s")).execute().print()
    t_env.create_temporary_function("my_sum", my_sum)
    t_env.create_temporary_view("totals", totals)
    t_env.execute_sql("SELECT my_sum(total) AS s FROM totals").print()


if __name__ == "__main__":
    main()
