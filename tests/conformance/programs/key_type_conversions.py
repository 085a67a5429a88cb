"""key_by(key_selector, key_type): the key goes through its declared type before the shuffle.

A float declared INT is truncated (1.5 and 1.7 become one key, which reduce and windows group by),
an int declared FLOAT or DOUBLE becomes a float, a bool declared INT an int, a tuple's fields and a
Row's names follow the declared type, a None key stays None; what ctx.get_current_key() returns is
the converted key. PICKLED_BYTE_ARRAY (the default) keeps the key as it is.
"""

from pyflink.common import Row, Types
from pyflink.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from pyflink.datastream.functions import ProcessWindowFunction


class CurrentKey(KeyedProcessFunction):
    def __init__(self, label):
        self.label = label

    def process_element(self, value, ctx):
        key = ctx.get_current_key()
        yield f"{self.label}: key {key!r} {type(key).__name__} value {value!r}"


class WindowKey(ProcessWindowFunction):
    def process(self, key, context, elements):
        yield f"window key {key!r} {type(key).__name__} n={len(list(elements))}"


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    floats = env.from_collection([1.5, 1.7, 2.2, 3.0])
    floats.key_by(lambda x: x, key_type=Types.INT()).process(CurrentKey("float for INT")).print()
    floats.key_by(lambda x: x, key_type=Types.INT()).reduce(lambda a, b: a + b).map(
        lambda v: f"reduce float for INT {v!r}"
    ).print()
    floats.key_by(lambda x: x, key_type=Types.INT()).count_window(2).process(WindowKey()).print()
    ints = env.from_collection([1, 2, 1])
    ints.key_by(lambda x: x, key_type=Types.FLOAT()).process(CurrentKey("int for FLOAT")).print()
    ints.key_by(lambda x: x, key_type=Types.DOUBLE()).process(CurrentKey("int for DOUBLE")).print()
    ints.key_by(lambda x: x == 1, key_type=Types.INT()).process(CurrentKey("bool for INT")).print()
    ints.key_by(lambda x: ("k", x), key_type=Types.TUPLE([Types.STRING(), Types.FLOAT()])).process(
        CurrentKey("tuple with an int for FLOAT")
    ).print()
    ints.key_by(
        lambda x: Row(x, "a"), key_type=Types.ROW_NAMED(["id", "n"], [Types.INT(), Types.STRING()])
    ).process(CurrentKey("positional Row for ROW_NAMED")).print()
    ints.key_by(lambda x: x, key_type=Types.PICKLED_BYTE_ARRAY()).process(CurrentKey("pickled")).print()
    ints.key_by(lambda x: x * 1000000000000, key_type=Types.LONG()).process(CurrentKey("LONG")).print()
    env.from_collection([(None, "a"), ("y", "b")]).key_by(lambda t: t[0], key_type=Types.STRING()).process(
        CurrentKey("None for STRING")
    ).print()
    typed = env.from_collection([(1, "a")], type_info=Types.TUPLE([Types.INT(), Types.STRING()]))
    typed.key_by(lambda t: t[1], key_type=Types.STRING()).process(CurrentKey("typed stream")).print()
    env.execute("key_type_conversions")


if __name__ == "__main__":
    main()
