"""Which elements PyFlink refuses at from_collection (a plan-time failure, caught here)."""

import decimal

from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    row_type = Types.ROW_NAMED(["id", "info"], [Types.INT(), Types.STRING()])
    cases = [
        ("str for INT", ["a"], Types.INT()),
        ("bool for INT", [True], Types.INT()),
        ("int for DOUBLE", [1], Types.DOUBLE()),
        ("int for FLOAT", [1], Types.FLOAT()),
        ("int for BOOLEAN", [1], Types.BOOLEAN()),
        ("None for STRING", [None], Types.STRING()),
        ("float for INT", [1.5], Types.INT()),
        ("too big for LONG", [2**70], Types.LONG()),
        ("short row", [(1,)], row_type),
        ("long row", [(1, "a", "x")], row_type),
        ("row with other names", [Row(x=1, y="a")], row_type),
        ("int for ROW", [1], Types.ROW([Types.INT()])),
        ("short tuple", [("a",)], Types.TUPLE([Types.STRING(), Types.INT()])),
        ("str in tuple INT field", [("a", "b")], Types.TUPLE([Types.STRING(), Types.INT()])),
        ("int for TUPLE", [1], Types.TUPLE([Types.STRING()])),
        ("None map value", [{"a": None}], Types.MAP(Types.STRING(), Types.INT())),
        ("int in DOUBLE array", [[1]], Types.PRIMITIVE_ARRAY(Types.DOUBLE())),
        ("float for DOUBLE", [1.5], Types.DOUBLE()),
        ("decimal", [decimal.Decimal("2.5")], Types.BIG_DEC()),
        ("str for INT in a row", [("x", "a")], row_type),
    ]
    for name, elements, type_info in cases:
        try:
            env.from_collection(elements, type_info=type_info)
        except Exception:
            print(f"rejected: {name}")
        else:
            print(f"accepted: {name}")
    env.from_collection(["done"]).print()
    env.execute("types_rejected_elements")


if __name__ == "__main__":
    main()
