"""Declared tuples print as Java tuples: (a,1), nested rows as +I[s, 1], arrays spelled out."""

from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    pairs = env.from_collection(
        [("a", 1), ["b", 2], Row("c", 3)], type_info=Types.TUPLE([Types.STRING(), Types.INT()])
    )
    pairs.print()
    pairs.map(lambda t: f"{type(t).__name__} {t!r}").print()
    nested = env.from_collection(
        [(1, [1, 2], [3, 4], ("s", 1), 1.1, "z")],
        type_info=Types.TUPLE(
            [
                Types.INT(),
                Types.PRIMITIVE_ARRAY(Types.INT()),
                Types.BASIC_ARRAY(Types.INT()),
                Types.ROW([Types.STRING(), Types.INT()]),
                Types.FLOAT(),
                Types.STRING(),
            ]
        ),
    )
    nested.print()
    nested.map(lambda t: repr(t)).print()
    words = env.from_collection(["x", "y", "x"])
    words.map(lambda w: (w, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()])).key_by(
        lambda t: t[0]
    ).reduce(lambda a, b: (a[0], a[1] + b[1])).print()
    env.from_collection([1, 2], type_info=Types.STRING()).map(lambda s: f"{type(s).__name__} {s}").print()
    env.execute("types_tuple_print")


if __name__ == "__main__":
    main()
