"""A configuration value that is not a number fails when the environment reads it, naming key and value."""

from pyflink.common import Configuration
from pyflink.datastream import StreamExecutionEnvironment


def main() -> None:
    config = Configuration()
    config.set_string("parallelism.default", "abc")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.from_collection([1, 2]).print()
    env.execute("config_bad_parallelism")


if __name__ == "__main__":
    main()
