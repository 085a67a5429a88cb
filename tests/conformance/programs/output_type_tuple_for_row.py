"""Types.ROW takes Rows: a map that returns a tuple for it fails when the records go to key_by."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    (
        env.from_collection(["a", "b", "a"])
        .map(lambda w: (w, 1), output_type=Types.ROW_NAMED(["word", "n"], [Types.STRING(), Types.INT()]))
        .key_by(lambda r: r[0])
        .map(lambda r: f"{r[0]}:{r[1]}", output_type=Types.STRING())
        .print()
    )
    env.execute("output_type_tuple_for_row")


if __name__ == "__main__":
    main()
