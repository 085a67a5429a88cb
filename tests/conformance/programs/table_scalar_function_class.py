"""A ScalarFunction class with open(): state set up once per instance, then used per row."""
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col
from pyflink.table.udf import ScalarFunction, udf


class Lookup(ScalarFunction):
    def open(self, function_context):
        self.names = {1: "one", 2: "two", 3: "three"}

    def eval(self, i):
        return self.names.get(i, "many")


class Scale(ScalarFunction):
    def __init__(self, factor):
        self.factor = factor

    def eval(self, x):
        return x * self.factor


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    lookup = udf(Lookup(), result_type=DataTypes.STRING())
    scale = udf(Scale(10), result_type=DataTypes.DOUBLE())
    t = t_env.from_elements([(1, 0.5), (2, 1.5), (3, 2.0), (7, -1.0)], ["n", "x"])
    t.select(col("n"), lookup(col("n")).alias("name"), scale(col("x")).alias("scaled")).execute().print()


if __name__ == "__main__":
    main()
