"""Python table functions in SQL: LATERAL TABLE with CROSS JOIN, the comma form and LEFT JOIN ... ON
TRUE, registered with create_temporary_function and create_temporary_system_function."""
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.udf import udtf


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def split(s):
    if s is None:
        return
    for word in s.split(" "):
        yield word, len(word)


@udtf(result_types=DataTypes.BIGINT())
def numbers(n):
    return list(range(n))


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.create_temporary_view("t", t_env.from_elements(
        [(1, "hello big world"), (2, ""), (3, None), (4, "x")], ["id", "s"]))
    t_env.create_temporary_function("split_words", split)
    t_env.create_temporary_system_function("numbers", numbers)

    t_env.execute_sql(
        "SELECT id, word, length FROM t CROSS JOIN LATERAL TABLE(split_words(s)) AS T(word, length)").print()
    t_env.execute_sql("SELECT id, word FROM t, LATERAL TABLE(split_words(s)) AS T(word, length)").print()
    t_env.execute_sql(
        "SELECT id, word, length FROM t LEFT JOIN LATERAL TABLE(split_words(s)) AS T(word, length) ON TRUE"
    ).print()
    t_env.execute_sql(
        "SELECT t.id, T.word, UPPER(T.word) AS loud FROM t CROSS JOIN LATERAL TABLE(split_words(t.s)) "
        "AS T(word, length) WHERE T.length > 2").print()
    t_env.execute_sql("SELECT id, f0 FROM t, LATERAL TABLE(numbers(id))").print()
    t_env.execute_sql("SELECT id, n FROM t, LATERAL TABLE(numbers(id + 1)) T(n) WHERE n > id - 2").print()
    t_env.execute_sql(
        "SELECT id, COUNT(*) AS words, SUM(length) AS letters "
        "FROM t, LATERAL TABLE(split_words(s)) AS T(word, length) GROUP BY id").print()
    t_env.execute_sql(
        "SELECT id, word FROM t JOIN LATERAL TABLE(split_words(s)) AS T(word, length) ON length > 3").print()


if __name__ == "__main__":
    main()
