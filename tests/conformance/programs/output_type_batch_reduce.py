"""BATCH mode: records reach a keyed reduce through the feeding function's declared type.

The flat_map declares TUPLE(STRING, INT) and emits a float count; each record is an int tuple
before any reduce call, so the sums are sums of ints (1.7 counts as 1).
"""

from pyflink.common import Types
from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment

TEXT = ["to be or not to be", "be quick", "or not"]


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(1)
    env.from_collection(TEXT).flat_map(
        lambda line: [(w, 1.7) for w in line.split()],
        output_type=Types.TUPLE([Types.STRING(), Types.INT()]),
    ).key_by(lambda t: t[0]).reduce(lambda a, b: (a[0], a[1] + b[1])).map(
        lambda t: f"{t[0]}: {t[1]!r}"
    ).print()
    env.execute("output_type_batch_reduce")


if __name__ == "__main__":
    main()
