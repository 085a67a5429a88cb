"""Allowed lateness re-fires a window; data later than that goes to a side output."""
from pyflink.common import Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import OutputTag, StreamExecutionEnvironment
from pyflink.datastream.functions import ProcessWindowFunction
from pyflink.datastream.window import TumblingEventTimeWindows

LATE = OutputTag("late", Types.TUPLE([Types.STRING(), Types.LONG()]))


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class Count(ProcessWindowFunction):
    def process(self, key, context, elements):
        yield key, context.window().start, len(list(elements))


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [("k", 100), ("k", 200), ("k", 1200), ("k", 300), ("k", 2600), ("k", 1900), ("k", 400)]
    windowed = env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.LONG()])) \
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts())) \
        .key_by(lambda t: t[0]) \
        .window(TumblingEventTimeWindows.of(Time.seconds(1))) \
        .allowed_lateness(1000) \
        .side_output_late_data(LATE) \
        .process(Count(), output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()]))
    windowed.print("on time")
    windowed.get_side_output(LATE).print("late")
    env.execute("late_data")


if __name__ == "__main__":
    main()
