"""BATCH mode: a str where the function feeding a keyed reduce declared an INT field fails the job,
even though the reduce would have combined it."""

from pyflink.common import Types
from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(1)
    env.from_collection(["a a", "b"]).flat_map(
        lambda line: [(w, "1") for w in line.split()],
        output_type=Types.TUPLE([Types.STRING(), Types.INT()]),
    ).key_by(lambda t: t[0]).reduce(lambda a, b: (a[0], a[1] + b[1])).print()
    env.execute("output_type_batch_reduce_str_for_int")


if __name__ == "__main__":
    main()
