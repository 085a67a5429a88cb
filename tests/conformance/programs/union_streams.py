from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    a = env.from_collection(["a1", "a2", "a3"], type_info=Types.STRING())
    b = env.from_collection(["b1", "b2"], type_info=Types.STRING())
    c = env.from_collection(["c1"], type_info=Types.STRING())
    a.union(b, c).map(lambda s: s.upper(), output_type=Types.STRING()).print()
    env.execute("union_streams")


if __name__ == "__main__":
    main()
