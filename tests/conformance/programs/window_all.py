from pyflink.common import Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import ProcessAllWindowFunction
from pyflink.datastream.window import TumblingEventTimeWindows


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class Top(ProcessAllWindowFunction):
    def process(self, context: ProcessAllWindowFunction.Context, elements):
        best = max(elements, key=lambda e: e[2])
        yield context.window().start, best[0], best[2]


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    data = [("a", 10, 5), ("b", 20, 9), ("c", 1500, 2), ("a", 1600, 8), ("d", 2100, 1)]
    typ = Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()])
    env.from_collection(data, type_info=typ).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts())
    ).window_all(TumblingEventTimeWindows.of(Time.seconds(1))).process(
        Top(), output_type=Types.TUPLE([Types.LONG(), Types.STRING(), Types.INT()])
    ).print()
    env.execute("window_all")


if __name__ == "__main__":
    main()
