"""Event-time sliding windows: page views per page over the last 10 s, every 5 s (PyFlink API, flott prefix).

    flott run examples/sliding_windows.py

``SlidingEventTimeWindows.of(10 s, 5 s)`` puts each view into two windows; an
AggregateFunction counts incrementally and a ProcessWindowFunction adds the
window bounds to the count.

Output (in some order):

    (home,-5000,5000,2)   (home,0,10000,4)   (home,5000,15000,3)   (home,10000,20000,1)
    (cart,-5000,5000,1)   (cart,0,10000,1)   (cart,5000,15000,1)   (cart,10000,20000,1)
"""

from flott.common import Duration, Types, WatermarkStrategy
from flott.common.time import Time
from flott.common.watermark_strategy import TimestampAssigner
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.functions import AggregateFunction, ProcessWindowFunction
from flott.datastream.window import SlidingEventTimeWindows

VIEWS = [  # (page, epoch ms)
    ("home", 1_000),
    ("cart", 2_000),
    ("home", 6_000),
    ("home", 8_000),
    ("cart", 12_000),
    ("home", 14_000),
    ("home", 3_000),
]


class ViewTimestamp(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class CountViews(AggregateFunction):
    def create_accumulator(self):
        return 0

    def add(self, value, accumulator):
        return accumulator + 1

    def get_result(self, accumulator):
        return accumulator

    def merge(self, acc_a, acc_b):
        return acc_a + acc_b


class WithWindow(ProcessWindowFunction):
    def process(self, key, context, elements):
        for count in elements:
            yield key, context.window().start, context.window().end, count


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    (
        env.from_collection(VIEWS, type_info=Types.TUPLE([Types.STRING(), Types.LONG()]))
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(5)).with_timestamp_assigner(
                ViewTimestamp()
            )
        )
        .key_by(lambda v: v[0], key_type=Types.STRING())
        .window(SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5)))
        .aggregate(
            CountViews(),
            window_function=WithWindow(),
            accumulator_type=Types.LONG(),
            output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG(), Types.LONG()]),
        )
        .uid("views-per-window")
        .print()
    )
    env.execute("sliding_windows")


if __name__ == "__main__":
    main()
