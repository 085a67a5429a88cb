"""Types.BASIC_ARRAY takes lists: a tuple fails where the records leave the chain (here a rebalance)."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    (
        env.from_collection(["a b", "c"])
        .map(lambda line: tuple(line.split()), output_type=Types.BASIC_ARRAY(Types.STRING()))
        .rebalance()
        .map(lambda words: len(words), output_type=Types.INT())
        .print()
    )
    env.execute("output_type_tuple_for_basic_array")


if __name__ == "__main__":
    main()
