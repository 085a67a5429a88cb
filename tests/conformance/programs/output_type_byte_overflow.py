"""BYTE holds -128..127: a map declared BYTE that returns 300 fails the job."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection([100, 300]).map(lambda i: i, output_type=Types.BYTE()).print()
    env.execute("output_type_byte_overflow")


if __name__ == "__main__":
    main()
