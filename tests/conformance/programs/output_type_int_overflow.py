"""An int beyond 32 bits for a map declared INT fails when the records are shuffled by key."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    (
        env.from_collection([1, 2, 3])
        .map(lambda i: i * 2**31, output_type=Types.INT())
        .key_by(lambda i: i % 2)
        .reduce(lambda a, b: a + b)
        .print()
    )
    env.execute("output_type_int_overflow")


if __name__ == "__main__":
    main()
