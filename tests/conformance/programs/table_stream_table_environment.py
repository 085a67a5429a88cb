"""StreamTableEnvironment.create(env) on a StreamExecutionEnvironment; the env's parallelism applies."""
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import StreamTableEnvironment
from pyflink.table.expressions import col


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(env)
    table = t_env.from_elements([(1, "a"), (2, "b"), (3, "c")], ["id", "name"])
    table.where(col("id") > 1).execute().print()
    print(t_env.list_tables())
    t_env.create_temporary_view("letters", table)
    print(t_env.list_tables())
    print(t_env.list_temporary_views())


if __name__ == "__main__":
    main()
