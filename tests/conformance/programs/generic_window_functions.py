"""Typed window functions as PyFlink's examples write them: Generic ProcessWindowFunction and
ProcessAllWindowFunction subclasses with subscripted Context annotations (evaluated at class
definition, as in any module without ``from __future__ import annotations``)."""

from collections.abc import Iterable

from pyflink.common import Time, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import ProcessAllWindowFunction, ProcessWindowFunction
from pyflink.datastream.window import TimeWindow, TumblingEventTimeWindows


class ByTimestamp(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp) -> int:
        return value[1]


class KeyedContents(ProcessWindowFunction[tuple, str, str, TimeWindow]):
    def process(
        self, key: str, context: ProcessWindowFunction.Context[TimeWindow], elements: Iterable[tuple]
    ) -> Iterable[str]:
        window = context.window()
        yield f"{key} [{window.start}, {window.end}) {sorted(ts for _, ts in elements)}"


class AllContents(ProcessAllWindowFunction[tuple, str, TimeWindow]):
    def process(
        self, context: ProcessAllWindowFunction.Context[TimeWindow], elements: Iterable[tuple]
    ) -> Iterable[str]:
        window = context.window()
        yield f"all [{window.start}, {window.end}) {sorted(ts for _, ts in elements)}"


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
events = env.from_collection(
    [("a", 1), ("b", 2), ("a", 3), ("a", 12), ("b", 15), ("b", 27)],
    type_info=Types.TUPLE([Types.STRING(), Types.LONG()]),
).assign_timestamps_and_watermarks(
    WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(ByTimestamp())
)
windows = TumblingEventTimeWindows.of(Time.milliseconds(10))
keyed = events.key_by(lambda e: e[0])
keyed.window(windows).process(KeyedContents(), Types.STRING()).print().set_parallelism(1)
events.window_all(windows).process(AllContents(), Types.STRING()).print().set_parallelism(1)
env.execute("generic_window_functions")
