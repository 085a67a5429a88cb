"""A vectorized (pandas) scalar UDF returning a Series shorter than its input: the job fails with
PyFlink's message naming the function and both lengths."""
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col
from pyflink.table.udf import udf


@udf(result_type=DataTypes.BIGINT(), func_type="pandas")
def first_only(a):
    return a[:1]


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "1")
    t = t_env.from_elements([(1,), (2,), (3,)], ["a"])
    t.select(col("a"), first_only(col("a")).alias("f")).execute().print()


if __name__ == "__main__":
    main()
