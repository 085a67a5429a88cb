"""FLOAT goes through 32 bits (visible to functions and in print); DOUBLE prints like Java."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    floats = env.from_collection([1.1, 0.1, 3.0, 1e20, 123456789.0, -2.5e-5], type_info=Types.FLOAT())
    floats.print()
    floats.map(lambda f: f"float seen {f!r}").print()
    doubles = env.from_collection([1.1, 0.1, 3.0, 1e20, 1e-5, 12345678.9, 1e7], type_info=Types.DOUBLE())
    doubles.print()
    doubles.map(lambda d: f"double seen {d!r}").print()
    rows = env.from_collection(
        [(1.1, 1.1)], type_info=Types.ROW_NAMED(["f", "d"], [Types.FLOAT(), Types.DOUBLE()])
    )
    rows.print()
    rows.map(lambda r: f"row {r.f!r} {r.d!r}").print()
    env.execute("types_float_double")


if __name__ == "__main__":
    main()
