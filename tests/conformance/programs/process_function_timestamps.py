from pyflink.common import Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import ProcessFunction


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1] * 1000


class Stamp(ProcessFunction):
    def process_element(self, value, ctx: ProcessFunction.Context):
        yield value[0], ctx.timestamp()


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [("e1", 1), ("e2", 5), ("e3", 3)]
    env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.INT()])) \
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts())) \
        .process(Stamp(), output_type=Types.TUPLE([Types.STRING(), Types.LONG()])) \
        .print()
    env.execute("process_function_timestamps")


if __name__ == "__main__":
    main()
