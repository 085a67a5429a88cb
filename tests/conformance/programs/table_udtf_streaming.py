"""A table function over an updating input in streaming mode: the correlate passes each
change's row kind on to the rows the function gives for it."""
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col
from pyflink.table.udf import udtf


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def split(s):
    for word in s.split(" "):
        yield word, len(word)


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    src = t_env.from_elements([("a", "x y"), ("b", "z"), ("a", "zz w")], ["k", "s"])
    latest = src.group_by(col("k")).select(col("k"), col("s").max.alias("m"))
    latest.join_lateral(split(col("m")).alias("word", "length")).execute().print()
    t_env.create_temporary_function("split_words", split)
    t_env.create_temporary_view("src", src)
    t_env.execute_sql(
        "SELECT k, word FROM src, LATERAL TABLE(split_words(s)) AS T(word, length) WHERE length = 1").print()


if __name__ == "__main__":
    main()
