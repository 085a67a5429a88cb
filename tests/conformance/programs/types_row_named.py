"""Rows from a declared ROW_NAMED collection: field access, printing, keying by a field."""

from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    row_type = Types.ROW_NAMED(["id", "info"], [Types.INT(), Types.STRING()])
    ds = env.from_collection(
        [(1, "apple"), [2, "pear"], Row(3, "plum"), Row(info="fig", id=4), {"id": 5, "info": "apple"}],
        type_info=row_type,
    )
    ds.map(lambda r: f"{r.id}:{r.info}:{r['info']}:{r[0]}").print()
    ds.map(lambda r: repr(r)).print()
    ds.print()
    ds.key_by(lambda r: r.info).reduce(lambda a, b: Row(id=a.id + b.id, info=a.info)).map(
        lambda r: f"sum {r.info} {r.id}"
    ).print()
    env.from_collection([(None, "x"), ("not a number", "y")], type_info=row_type).print()
    env.execute("types_row_named")


if __name__ == "__main__":
    main()
