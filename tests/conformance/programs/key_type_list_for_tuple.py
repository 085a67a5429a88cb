"""A list key declared key_type=Types.TUPLE(...) fails the job: the key must be a tuple."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection([1, 2]).key_by(
        lambda x: [str(x), x], key_type=Types.TUPLE([Types.STRING(), Types.INT()])
    ).map(str).print()
    env.execute("key_type_list_for_tuple")


if __name__ == "__main__":
    main()
