"""What the declared output_type turns a function's results into once they leave the chain.

Chained Python functions (one consumer each) pass values on as they are; across a network edge (rebalance, key_by)
and into print(), the records go through the declared type: an int declared FLOAT or DOUBLE
becomes a float, a bool or a float declared INT an int, a Row takes the declared field names
and arity, a dict comes back in Java's HashMap order.
"""

import datetime
import decimal

from pyflink.common import Row, Types
from pyflink.datastream import StreamExecutionEnvironment


def seen(label):
    return lambda v: f"{label}: {v!r} {type(v).__name__}"


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    one = env.from_collection(["x"])
    cases = [
        ("int for FLOAT", 3, Types.FLOAT()),
        ("float for FLOAT", 1.1, Types.FLOAT()),
        ("int for DOUBLE", 7, Types.DOUBLE()),
        ("bool for INT", True, Types.INT()),
        ("float for INT", 2.7, Types.INT()),
        ("negative float for LONG", -2.7, Types.LONG()),
        ("int for BOOLEAN", 5, Types.BOOLEAN()),
        ("float for BIG_DEC", 1.5, Types.BIG_DEC()),
        ("datetime for SQL_DATE", datetime.datetime(2024, 5, 6, 7, 8, 9), Types.SQL_DATE()),
        ("decimal for DOUBLE", decimal.Decimal("2.5"), Types.DOUBLE()),
        (
            "positional Row for ROW_NAMED",
            Row(1, "a"),
            Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()]),
        ),
        ("long Row for ROW", Row(1, "a", "extra"), Types.ROW([Types.INT(), Types.STRING()])),
        ("Row with a bool field", Row(True, 2), Types.ROW([Types.INT(), Types.DOUBLE()])),
        ("tuple with an int for FLOAT", ("k", 4), Types.TUPLE([Types.STRING(), Types.FLOAT()])),
        ("bytearray for BYTE array", bytearray(b"hi"), Types.PRIMITIVE_ARRAY(Types.BYTE())),
        ("list with None for BASIC_ARRAY", [1, None], Types.BASIC_ARRAY(Types.INT())),
        ("dict for MAP", {"b": 2, "a": 1, "Aa": 3, "zz": 5}, Types.MAP(Types.STRING(), Types.INT())),
        ("None for STRING", None, Types.STRING()),
    ]
    for label, value, type_info in cases:

        def typed(value=value, type_info=type_info):
            return one.map(lambda _: value, output_type=type_info)

        typed().map(seen(f"chained, {label}"), output_type=Types.STRING()).print()
        typed().rebalance().map(seen(f"shuffled, {label}"), output_type=Types.STRING()).print()
        if value is not None and "array" not in label.lower():  # Java prints an array as its identity
            typed().print()
    env.execute("output_type_conversions")


if __name__ == "__main__":
    main()
