"""Types.TUPLE takes tuples: a map that returns a list for it fails the job."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection(["a", "b"]).map(
        lambda w: [w, 1], output_type=Types.TUPLE([Types.STRING(), Types.INT()])
    ).print()
    env.execute("output_type_list_for_tuple")


if __name__ == "__main__":
    main()
