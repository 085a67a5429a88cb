from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    words = env.from_collection(
        [("apple", 1), ("banana", 2), ("cherry", 3), ("apple", 4)],
        type_info=Types.TUPLE([Types.STRING(), Types.INT()]),
    )
    doubled = words.map(lambda t: (t[0], t[1] * 2), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
    with doubled.execute_and_collect() as results:
        for value in results:
            print("tuple", type(value).__name__, value)

    rows = env.from_collection(
        [Row(1, "one"), Row(2, "two")],
        type_info=Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()]),
    )
    for row in rows.execute_and_collect("rows job"):
        print("row", row.id, row.name)

    plain = env.from_collection([10, 20, 30]).map(lambda x: x + 1)
    print("untyped", sorted(plain.execute_and_collect()))


if __name__ == "__main__":
    main()
