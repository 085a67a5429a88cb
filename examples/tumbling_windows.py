"""Event-time tumbling windows: the hottest reading per sensor every 5 seconds (PyFlink API, flott prefix).

    flott run examples/tumbling_windows.py

Readings carry their own timestamps and arrive up to 2 s out of order; a
bounded-out-of-orderness WatermarkStrategy turns them into event time. Per
sensor, ``TumblingEventTimeWindows`` of 5 s keep the maximum (an incremental
``reduce``), and a ProcessWindowFunction labels each result with its window.
``window_all`` does the same over all sensors. Records later than the
watermark would go to the ``late-readings`` side output; here every record
arrives before the first periodic watermark, so it stays empty (as in Flink).

Output (in some order):

    (s1,0,5000,22.5)     (s1,5000,10000,21.0)     (s1,10000,15000,25.0)
    (s2,0,5000,17.0)     (s2,5000,10000,16.0)     (s2,10000,15000,18.5)
    hottest> (0,5000,22.5)   hottest> (5000,10000,21.0)   hottest> (10000,15000,25.0)
"""

from flott.common import Duration, Types, WatermarkStrategy
from flott.common.time import Time
from flott.common.watermark_strategy import TimestampAssigner
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.functions import ProcessAllWindowFunction, ProcessWindowFunction
from flott.datastream.output_tag import OutputTag
from flott.datastream.window import TumblingEventTimeWindows

READINGS = [  # (sensor, epoch ms, temperature)
    ("s1", 1_000, 20.0),
    ("s2", 2_000, 15.0),
    ("s1", 4_000, 22.5),
    ("s1", 7_000, 21.0),
    ("s2", 3_500, 17.0),
    ("s1", 3_000, 19.0),
    ("s2", 11_000, 18.5),
    ("s1", 12_500, 25.0),
    ("s2", 9_000, 16.0),
]
READING = Types.TUPLE([Types.STRING(), Types.LONG(), Types.DOUBLE()])


class ReadingTimestamp(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


def hotter(a, b):
    return a if a[2] >= b[2] else b


class LabelWithWindow(ProcessWindowFunction):
    def process(self, key, context, elements):
        window = context.window()
        for reading in elements:  # the one reduced reading
            yield key, window.start, window.end, reading[2]


class HottestOfAll(ProcessAllWindowFunction):
    def process(self, context, elements):
        window = context.window()
        for reading in elements:
            yield window.start, window.end, reading[2]


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    readings = env.from_collection(READINGS, type_info=READING).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(2)).with_timestamp_assigner(
            ReadingTimestamp()
        )
    )
    # A type object of its own: PyFlink cannot pickle one it already handed to the JVM.
    late = OutputTag("late-readings", Types.TUPLE([Types.STRING(), Types.LONG(), Types.DOUBLE()]))
    per_sensor = (
        readings.key_by(lambda r: r[0], key_type=Types.STRING())
        .window(TumblingEventTimeWindows.of(Time.seconds(5)))
        .side_output_late_data(late)
        .reduce(
            hotter,
            window_function=LabelWithWindow(),
            output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG(), Types.DOUBLE()]),
        )
        .uid("hottest-per-sensor")
    )
    per_sensor.print()
    per_sensor.get_side_output(late).print("late")
    readings.window_all(TumblingEventTimeWindows.of(Time.seconds(5))).reduce(
        hotter,
        window_function=HottestOfAll(),
        output_type=Types.TUPLE([Types.LONG(), Types.LONG(), Types.DOUBLE()]),
    ).uid("hottest-of-all").print("hottest")
    env.execute("tumbling_windows")


if __name__ == "__main__":
    main()
