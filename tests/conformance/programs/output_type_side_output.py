"""A side output is checked against its OutputTag's type: a str sent to an INT tag fails the job."""

from pyflink.common import Types
from pyflink.datastream import OutputTag, ProcessFunction, StreamExecutionEnvironment

LENGTHS = OutputTag("lengths", Types.INT())


class SplitLengths(ProcessFunction):
    def process_element(self, value, ctx):
        yield LENGTHS, str(len(value))  # should have been len(value)
        yield value.upper()


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    words = env.from_collection(["a", "bb"]).process(SplitLengths(), output_type=Types.STRING())
    words.get_side_output(LENGTHS).map(lambda n: n * 2, output_type=Types.INT()).print()
    words.print()
    env.execute("output_type_side_output")


if __name__ == "__main__":
    main()
