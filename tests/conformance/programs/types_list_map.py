"""MAP values arrive in java.util.HashMap order; arrays arrive as lists; SQL times in millis."""

import datetime
import decimal

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    maps = env.from_collection([{"a": 1, "b": 2, "zz": 3}], type_info=Types.MAP(Types.STRING(), Types.INT()))
    maps.print()
    maps.map(lambda m: f"map seen {m!r}").print()
    int_keys = env.from_collection(
        [{1: "a", 17: "b", 33: "c", 2: "d"}], type_info=Types.MAP(Types.INT(), Types.STRING())
    )
    int_keys.print()
    int_keys.map(lambda m: f"int keys seen {list(m)}").print()
    arrays = env.from_collection([["a", "b"], ("c",)], type_info=Types.BASIC_ARRAY(Types.STRING()))
    arrays.map(lambda a: f"array seen {type(a).__name__} {a}").print()
    ints = env.from_collection([[1, 2], (3,)], type_info=Types.PRIMITIVE_ARRAY(Types.INT()))
    ints.map(lambda a: f"ints seen {a}").print()
    row = env.from_collection(
        [([1, 2], {"k": 1}, decimal.Decimal("1.50"), datetime.date(2021, 3, 4), True, None)],
        type_info=Types.ROW(
            [
                Types.BASIC_ARRAY(Types.INT()),
                Types.MAP(Types.STRING(), Types.INT()),
                Types.BIG_DEC(),
                Types.SQL_DATE(),
                Types.BOOLEAN(),
                Types.STRING(),
            ]
        ),
    )
    row.print()
    times = env.from_collection(
        [datetime.datetime(2020, 1, 2, 3, 4, 5, 123456), datetime.datetime(2020, 1, 2, 3, 4, 5)],
        type_info=Types.SQL_TIMESTAMP(),
    )
    times.print()
    times.map(lambda t: f"timestamp seen {t!r}").print()
    env.from_collection([datetime.time(1, 2, 3, 456789)], type_info=Types.SQL_TIME()).map(
        lambda t: f"time seen {t!r}"
    ).print()
    env.from_collection([decimal.Decimal("-0"), decimal.Decimal("1E+3")], type_info=Types.BIG_DEC()).print()
    env.from_collection([1, 200, 2**40], type_info=Types.BYTE()).print()
    env.execute("types_list_map")


if __name__ == "__main__":
    main()
