from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    data = [("apple", 1), ("pear", 2), ("apple", 3), ("plum", 4), ("pear", 5), ("apple", 6)]
    ds = env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    ds.key_by(lambda t: t[0]).reduce(lambda a, b: (a[0], a[1] + b[1])).print()
    env.execute("key_by_reduce")


if __name__ == "__main__":
    main()
