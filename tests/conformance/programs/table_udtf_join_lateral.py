"""Python table functions in the Table API: @udtf and TableFunction with join_lateral,
left_outer_join_lateral (with and without a predicate) and flat_map."""
from pyflink.common import Row
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col, lit
from pyflink.table.udf import TableFunction, udtf


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def split(s):
    if s is None:
        return
    for word in s.split(" "):
        yield word, len(word)


@udtf(result_types=DataTypes.BIGINT())
def numbers(n):
    return range(n)


@udtf(result_types="ROW<word STRING, upper_word STRING>")
def shout(s):
    return [Row(w, w.upper()) for w in (s or "").split(" ") if w]


@udtf(result_types=[DataTypes.BIGINT(), DataTypes.STRING()])
def words_of_row(row):
    for word in (row[1] or "").split(" "):
        if word:
            yield row[0], word


class Repeat(TableFunction):
    def open(self, function_context):
        self.times = 2

    def eval(self, id, s):
        for i in range(self.times):
            yield id * 10 + i, s


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t = t_env.from_elements([(1, "hello big world"), (2, ""), (3, None), (4, "x")], ["id", "s"])

    t.join_lateral(split(col("s")).alias("word", "length")).execute().print()
    t.left_outer_join_lateral(split(col("s")).alias("word", "length")).execute().print()
    t.left_outer_join_lateral(split(col("s")).alias("word", "length"), lit(True)) \
        .select(col("id"), col("word")).execute().print()

    repeat = udtf(Repeat(), result_types=[DataTypes.BIGINT(), DataTypes.STRING()])
    t.join_lateral(repeat(col("id"), col("s")).alias("rid", "rs"),
                   (col("rs") == col("s")) & (col("rid") > 20)).execute().print()

    t.join_lateral(numbers(col("id")).alias("n")).select(col("id"), col("n"), col("id") * col("n")) \
        .execute().print()
    t.join_lateral(numbers(col("id"))).where(col("f0") > 1).execute().print()
    t.join_lateral(shout(col("s"))).execute().print()
    t.join_lateral(words_of_row.alias("rid", "rword")).execute().print()

    t.flat_map(split(col("s"))).execute().print()
    t.flat_map(words_of_row).select(col("f1"), col("f0")).execute().print()
    t.flat_map(shout(col("s").upper_case)).execute().print()
    print(t.join_lateral(split(col("s")).alias("word", "length")).get_schema())
    print(t.left_outer_join_lateral(split(col("s")).alias("word", "length")).get_schema())


if __name__ == "__main__":
    main()
