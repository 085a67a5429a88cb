"""An int key declared key_type=Types.STRING() fails the job, as PyFlink's key coder does."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection([(1, "a"), (2, "b")]).key_by(lambda t: t[0], key_type=Types.STRING()).map(
        lambda t: str(t)
    ).print()
    env.execute("key_type_int_for_string")


if __name__ == "__main__":
    main()
