from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    ds = env.from_collection(["x", "y", "z"], type_info=Types.STRING())
    ds.print()
    ds.print("labelled")
    ds.map(lambda s: s * 2, output_type=Types.STRING()).set_parallelism(1).print("single")
    env.execute("print_identifiers")


if __name__ == "__main__":
    main()
