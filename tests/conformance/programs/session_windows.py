from pyflink.common import Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import WindowFunction
from pyflink.datastream.window import EventTimeSessionWindows


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class Session(WindowFunction):
    def apply(self, key, window, inputs):
        clicks = [i[2] for i in inputs]
        yield key, window.start, window.end, "+".join(sorted(clicks))


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [
        ("u1", 0, "home"), ("u1", 300, "cart"), ("u2", 100, "home"), ("u1", 2000, "home"),
        ("u2", 700, "search"), ("u1", 2400, "pay"), ("u2", 5000, "home"),
    ]
    typ = Types.TUPLE([Types.STRING(), Types.LONG(), Types.STRING()])
    env.from_collection(data, type_info=typ).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Ts())
    ).key_by(lambda t: t[0]).window(EventTimeSessionWindows.with_gap(Time.milliseconds(500))).apply(
        Session(), output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG(), Types.STRING()])
    ).print()
    env.execute("session_windows")


if __name__ == "__main__":
    main()
