from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    ds = env.from_collection([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], type_info=Types.INT())
    ds.filter(lambda x: x % 2 == 0).map(lambda x: x * x, output_type=Types.INT()).print()
    env.execute("map_filter")


if __name__ == "__main__":
    main()
