"""A map declared to return INT that returns a str fails the job where its records go to Java."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection(["1", "two"]).map(lambda s: s.upper(), output_type=Types.INT()).print()
    env.execute("output_type_str_for_int")


if __name__ == "__main__":
    main()
