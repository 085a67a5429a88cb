"""from_data_stream and to_data_stream between a DataStream and a Table."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import StreamTableEnvironment
from pyflink.table.expressions import col


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(env)
    ds = env.from_collection([("alice", 3), ("bob", 5), ("carol", 8)],
                             type_info=Types.ROW_NAMED(["name", "score"], [Types.STRING(), Types.INT()]))
    table = t_env.from_data_stream(ds)
    table.print_schema()
    doubled = table.select(col("name"), (col("score") * 2).alias("double_score"))
    t_env.to_data_stream(doubled).map(lambda r: f"{r.name}={r.double_score}", Types.STRING()).print()
    env.execute("table_datastream_conversion")


if __name__ == "__main__":
    main()
