"""Records without a declared output type print as Python's str()."""
from pyflink.datastream import StreamExecutionEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    ds = env.from_collection([("a", 1), ("b", 2), ("c", 3)])
    ds.map(lambda t: (t[0].upper(), t[1] * 10)).print()
    ds.map(lambda t: {"key": t[0], "values": [t[1]] * 2}).print()
    ds.map(lambda t: t[1] / 4).print()
    env.execute("untyped_records")


if __name__ == "__main__":
    main()
