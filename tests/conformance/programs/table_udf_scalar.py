"""@udf scalar functions with result_type, used from the Table API and registered for SQL."""
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import call, col
from pyflink.table.udf import udf


@udf(result_type=DataTypes.BIGINT())
def add(i, j):
    return i + j


@udf(result_type=DataTypes.STRING())
def shout(s):
    return None if s is None else s.upper() + "!"


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t = t_env.from_elements([(1, 2, "hi"), (3, 4, None), (10, -10, "yo")], ["a", "b", "s"])
    t.select(col("a"), add(col("a"), col("b")).alias("sum"), shout(col("s")).alias("loud")) \
        .execute().print()
    t_env.create_temporary_function("add", add)
    t_env.create_temporary_view("t", t)
    t_env.execute_sql("SELECT a, add(a, 100) AS plus FROM t").print()
    t.select(call("add", col("b"), 1).alias("b1")).execute().print()


if __name__ == "__main__":
    main()
