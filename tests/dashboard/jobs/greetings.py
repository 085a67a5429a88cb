"""A bounded job for the dashboard's submit page: prints one greeting per name it is given."""

import sys

from flott.datastream import StreamExecutionEnvironment


def main() -> None:
    names = sys.argv[1:] or ["world"]
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_collection([f"hello, {n}" for n in names]).print()
    env.execute("greetings from the dashboard")


if __name__ == "__main__":
    main()
