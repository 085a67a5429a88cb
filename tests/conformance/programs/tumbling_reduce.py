from pyflink.common import Duration, Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.window import TumblingEventTimeWindows


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[2]


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [("a", 1, 100), ("b", 2, 200), ("a", 3, 900), ("a", 4, 1100), ("b", 5, 1500), ("b", 6, 2100), ("a", 7, 2999)]
    ds = env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.INT(), Types.LONG()]))
    ds.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(0)).with_timestamp_assigner(Ts())
    ).key_by(lambda t: t[0]).window(TumblingEventTimeWindows.of(Time.seconds(1))).reduce(
        lambda a, b: (a[0], a[1] + b[1], max(a[2], b[2]))
    ).print()
    env.execute("tumbling_reduce")


if __name__ == "__main__":
    main()
