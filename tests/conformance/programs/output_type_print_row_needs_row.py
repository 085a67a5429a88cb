"""print() of a stream declared Types.ROW formats Rows; a record that is not a Row fails the job."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection(["a"]).map(
        lambda w: (w, 1), output_type=Types.ROW([Types.STRING(), Types.INT()])
    ).print()
    env.execute("output_type_print_row_needs_row")


if __name__ == "__main__":
    main()
