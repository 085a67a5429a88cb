from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    ds = env.from_collection([("ann", 31), ("bob", 27)], type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    rows = ds.map(lambda t: Row(t[0], t[1] + 1), output_type=Types.ROW([Types.STRING(), Types.INT()]))
    rows.print()
    named = ds.map(lambda t: Row(name=t[0], age=t[1]),
                   output_type=Types.ROW_NAMED(["name", "age"], [Types.STRING(), Types.INT()]))
    named.map(lambda r: f"{r.name} is {r.age}; {r['age'] * 2}", output_type=Types.STRING()).print()
    env.execute("row_output")


if __name__ == "__main__":
    main()
