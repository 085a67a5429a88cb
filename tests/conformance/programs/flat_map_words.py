from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment

LINES = ["to be or not to be", "that is the question", "whether tis nobler in the mind"]


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    words = env.from_collection(LINES, type_info=Types.STRING()).flat_map(
        lambda line: line.split(), output_type=Types.STRING()
    )
    words.map(lambda w: (w, len(w)), output_type=Types.TUPLE([Types.STRING(), Types.INT()])).print()
    env.execute("flat_map_words")


if __name__ == "__main__":
    main()
