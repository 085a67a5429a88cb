from pyflink.common import Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import AggregateFunction, ProcessWindowFunction
from pyflink.datastream.window import SlidingEventTimeWindows


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class CountAndSum(AggregateFunction):
    def create_accumulator(self):
        return [0, 0]

    def add(self, value, acc):
        return [acc[0] + 1, acc[1] + value[2]]

    def get_result(self, acc):
        return acc[0], acc[1]

    def merge(self, a, b):
        return [a[0] + b[0], a[1] + b[1]]


class WithWindow(ProcessWindowFunction):
    def process(self, key, context: ProcessWindowFunction.Context, elements):
        for count, total in elements:
            yield key, context.window().start, context.window().end, count, total


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    data = [("s1", 0, 5), ("s2", 400, 7), ("s1", 900, 1), ("s1", 1600, 3), ("s2", 1700, 2), ("s1", 2500, 10)]
    typ = Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()])
    env.from_collection(data, type_info=typ).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts())
    ).key_by(lambda t: t[0]).window(SlidingEventTimeWindows.of(Time.seconds(2), Time.seconds(1))).aggregate(
        CountAndSum(),
        WithWindow(),
        accumulator_type=Types.PICKLED_BYTE_ARRAY(),
        output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG(), Types.INT(), Types.INT()]),
    ).print()
    env.execute("sliding_aggregate")


if __name__ == "__main__":
    main()
