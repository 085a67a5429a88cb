"""reduce with a ProcessWindowFunction, and a processing-time assigner that never fires in a bounded job."""
from pyflink.common import Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import ProcessWindowFunction
from pyflink.datastream.window import TimeWindow, TumblingEventTimeWindows


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class Label(ProcessWindowFunction[tuple, str, str, TimeWindow]):
    def process(self, key: str, context: ProcessWindowFunction.Context[TimeWindow], elements):
        for e in elements:
            yield f"{key}@[{context.window().start},{context.window().end}) max={e[2]} wm={context.current_watermark() >= 0}"


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    data = [("p", 5, 3), ("q", 30, 4), ("p", 70, 9), ("p", 130, 1), ("q", 140, 8)]
    typ = Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()])
    env.from_collection(data, type_info=typ).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts())
    ).key_by(lambda t: t[0]).window(TumblingEventTimeWindows.of(Time.milliseconds(100))).reduce(
        lambda a, b: a if a[2] >= b[2] else b, window_function=Label(), output_type=Types.STRING()
    ).print()
    env.execute("window_apply_reduce_with_function")


if __name__ == "__main__":
    main()
