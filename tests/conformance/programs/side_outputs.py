from pyflink.common import Types
from pyflink.datastream import OutputTag, StreamExecutionEnvironment
from pyflink.datastream.functions import ProcessFunction

ODD = OutputTag("odd", Types.INT())
BIG = OutputTag("big", Types.STRING())


class Route(ProcessFunction):
    def process_element(self, value, ctx: ProcessFunction.Context):
        if value % 2:
            yield ODD, value
        if value > 6:
            yield BIG, f"big:{value}"
        yield value * 100


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    main_stream = env.from_collection(list(range(1, 10)), type_info=Types.INT()).process(
        Route(), output_type=Types.INT()
    )
    main_stream.print("main")
    main_stream.get_side_output(ODD).print("odd")
    main_stream.get_side_output(BIG).print("big")
    env.execute("side_outputs")


if __name__ == "__main__":
    main()
