from pyflink.table import DataTypes, EnvironmentSettings, ScalarFunction, TableEnvironment
from pyflink.table.expressions import call, col
from pyflink.table.udf import udf


@udf(result_type=DataTypes.BIGINT())
def add_one(x):
    return x + 1


class Greeter(ScalarFunction):
    def open(self, function_context):
        self.greeting = "hello"

    def eval(self, name):
        return f"{self.greeting} {name}"


greet = udf(Greeter(), result_type=DataTypes.STRING())

t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
t_env.get_config().set("parallelism.default", "1")
t = t_env.from_elements([(1, "ann"), (2, "ben"), (2, "cy")], ["k", "name"])
t.select(col("k"), add_one(col("k")).alias("k1"), greet(col("name")).alias("hi")).execute().print()
t_env.create_temporary_function("add_one", add_one)
t_env.create_temporary_view("t", t)
t_env.sql_query("SELECT add_one(k) AS k1, name FROM t WHERE add_one(k) > 2").execute().print()
t.select(call("add_one", col("k")).alias("via_call")).execute().print()
with t.group_by(col("k")).select(col("k"), col("name").count.alias("n")).execute().collect() as results:
    for row in results:
        print(row.get_row_kind(), row)
rows = list(t.execute().collect())
print(len(rows), rows[0], rows[0][0], rows[0][1], rows[0].get_row_kind())
