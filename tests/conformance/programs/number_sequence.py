from pyflink.common import Types, WatermarkStrategy
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors.number_seq import NumberSequenceSource


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    # one source subtask, so the running sums per key come in a fixed order
    numbers = env.from_source(
        NumberSequenceSource(1, 20), WatermarkStrategy.no_watermarks(), "numbers"
    ).set_parallelism(1)
    numbers.map(lambda n: n * 2, output_type=Types.LONG()).filter(lambda n: n % 10 == 0).print("even")
    numbers.key_by(lambda n: n % 3).reduce(lambda a, b: a + b).filter(lambda s: s > 50).map(
        lambda s: f"sum {s}", output_type=Types.STRING()
    ).print()
    env.execute("number_sequence")


if __name__ == "__main__":
    main()
