"""Elements that do not fit the declared type fail at from_collection, before the job runs."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    ds = env.from_collection(["a", "b"], type_info=Types.INT())
    ds.print()
    env.execute("types_mismatch")


if __name__ == "__main__":
    main()
