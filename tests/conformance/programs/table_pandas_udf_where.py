"""A vectorized (pandas) scalar UDF as a filter: where() with a pandas predicate returning a
boolean Series, combined with an ordinary condition and a projection calling another pandas UDF,
in batch and streaming mode."""
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col
from pyflink.table.udf import udf


@udf(result_type=DataTypes.BOOLEAN(), func_type="pandas")
def above_mean_of_two(a, b):
    return a > b * 2


@udf(result_type=DataTypes.BOOLEAN(), func_type="pandas")
def is_long(s):
    return s.str.len() > 4


@udf(result_type=DataTypes.STRING(), func_type="pandas")
def initials(s):
    return s.str[:2]


def main():
    data = [("alpha", 10, 3), ("beta", 4, 3), ("gamma", 9, 1), ("delta", 2, 5), ("epsilon", 30, 7)]
    for settings in (EnvironmentSettings.in_batch_mode(), EnvironmentSettings.in_streaming_mode()):
        t_env = TableEnvironment.create(settings)
        t_env.get_config().set("parallelism.default", "1")
        t = t_env.from_elements(data, ["name", "a", "b"])
        t.where(above_mean_of_two(col("a"), col("b"))).select(col("name"), col("a"), col("b")) \
            .execute().print()
        t.where(is_long(col("name")) & (col("a") > 5)) \
            .select(initials(col("name")).alias("ini"), col("a")).execute().print()
        t.filter(~is_long(col("name"))).select(col("name")).execute().print()


if __name__ == "__main__":
    main()
