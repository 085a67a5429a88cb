"""flat_aggregate with a Python TableAggregateFunction (Top2): per key the rows emit_value yields,
withdrawn (-D) and emitted again (+I) on each change; bundle size 1 so PyFlink emits every change."""
from pyflink.common import Row
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col
from pyflink.table.udf import TableAggregateFunction, udtaf


class Top2(TableAggregateFunction):
    def emit_value(self, accumulator):
        for i, v in enumerate(accumulator):
            if v is not None:
                yield Row(v, i + 1)

    def create_accumulator(self):
        return [None, None]

    def accumulate(self, accumulator, value):
        if value is None:
            return
        if accumulator[0] is None or value > accumulator[0]:
            accumulator[1] = accumulator[0]
            accumulator[0] = value
        elif accumulator[1] is None or value > accumulator[1]:
            accumulator[1] = value

    def get_accumulator_type(self):
        return DataTypes.ARRAY(DataTypes.BIGINT())

    def get_result_type(self):
        return DataTypes.ROW([DataTypes.FIELD("v", DataTypes.BIGINT()),
                              DataTypes.FIELD("rank", DataTypes.INT())])


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.get_config().set("python.fn-execution.bundle.size", "1")
    top2 = udtaf(Top2())
    t = t_env.from_elements([("a", 3), ("b", 5), ("a", 7), ("a", 1), ("b", None), ("a", 9)], ["k", "x"])
    t.group_by(col("k")).flat_aggregate(top2(col("x"))).select(col("k"), col("v"), col("rank")) \
        .execute().print()
    t.group_by(col("k")).flat_aggregate(top2(col("x")).alias("best", "place")) \
        .select(col("best"), col("place")).execute().print()
    t.flat_aggregate(top2(col("x") * 10).alias("best", "place")).select(col("*")).execute().print()


if __name__ == "__main__":
    main()
