from pyflink.common import Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import ProcessWindowFunction
from pyflink.datastream.window import DynamicEventTimeSessionWindows, SessionWindowTimeGapExtractor


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class Gap(SessionWindowTimeGapExtractor):
    def extract(self, element):
        return 1000 if element[0] == "slow" else 100


class Describe(ProcessWindowFunction):
    def process(self, key, context, elements):
        yield f"{key}: {context.window().start}-{context.window().end} n={len(list(elements))}"


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [("slow", 0), ("fast", 0), ("fast", 150), ("slow", 600), ("fast", 180), ("slow", 2000)]
    env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.LONG()])) \
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts())) \
        .key_by(lambda t: t[0]) \
        .window(DynamicEventTimeSessionWindows.with_dynamic_gap(Gap())) \
        .process(Describe(), output_type=Types.STRING()) \
        .print()
    env.execute("dynamic_session_gap")


if __name__ == "__main__":
    main()
