from pyflink.common import Types
from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment

TEXT = ["the quick brown fox", "jumps over the lazy dog", "the dog sleeps", "a fox runs"]


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(2)
    env.from_collection(TEXT, type_info=Types.STRING()) \
        .flat_map(lambda line: [(w, 1) for w in line.split()],
                  output_type=Types.TUPLE([Types.STRING(), Types.INT()])) \
        .key_by(lambda t: t[0]) \
        .reduce(lambda a, b: (a[0], a[1] + b[1])) \
        .print()
    env.execute("batch_word_count")


if __name__ == "__main__":
    main()
