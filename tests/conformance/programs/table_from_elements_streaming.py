"""A TableEnvironment in streaming mode: from_elements with column names, printed as a changelog (+I)."""
from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    table = t_env.from_elements(
        [(1, "Hi", 1.5, True), (2, "Hello", 2.25, False), (3, "Hello world", None, None)],
        ["id", "msg", "score", "flag"])
    table.execute().print()


if __name__ == "__main__":
    main()
