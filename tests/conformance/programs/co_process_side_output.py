from pyflink.common import Types
from pyflink.datastream import OutputTag, StreamExecutionEnvironment
from pyflink.datastream.functions import CoProcessFunction

REJECTED = OutputTag("rejected", Types.STRING())


class Merge(CoProcessFunction):
    def process_element1(self, value, ctx):
        if value < 0:
            yield REJECTED, f"negative {value}"
        else:
            yield f"number {value}"

    def process_element2(self, value, ctx):
        yield f"word {value}"


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    nums = env.from_collection([3, -1, 7], type_info=Types.INT())
    words = env.from_collection(["hi", "there"], type_info=Types.STRING())
    merged = nums.connect(words).process(Merge(), output_type=Types.STRING())
    merged.print()
    merged.get_side_output(REJECTED).print("rejected")
    env.execute("co_process_side_output")


if __name__ == "__main__":
    main()
