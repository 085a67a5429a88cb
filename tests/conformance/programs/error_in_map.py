"""A user function that raises fails the job; the error names the user's exception."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def parse(value):
    if value == "oops":
        raise ValueError(f"cannot parse record {value!r}")
    return int(value)


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection(["1", "2", "oops", "4"], type_info=Types.STRING()).map(
        parse, output_type=Types.INT()
    ).print()
    env.execute("error_in_map")


if __name__ == "__main__":
    main()
