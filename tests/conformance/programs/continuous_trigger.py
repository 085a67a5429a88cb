"""A global window per key, fired every 1000 ms of event time and at the end of input."""
from pyflink.common import Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.window import ContinuousEventTimeTrigger, TumblingEventTimeWindows


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [("k", 100, 1), ("k", 1200, 2), ("k", 2500, 3), ("k", 3100, 4), ("k", 4900, 5)]
    typ = Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()])
    env.from_collection(data, type_info=typ).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts())
    ).key_by(lambda t: t[0]).window(TumblingEventTimeWindows.of(Time.seconds(10))).trigger(
        ContinuousEventTimeTrigger.of(Time.seconds(1))
    ).reduce(lambda a, b: (a[0], max(a[1], b[1]), a[2] + b[2])).print()
    env.execute("continuous_trigger")


if __name__ == "__main__":
    main()
