"""Event-time timers in a KeyedProcessFunction: report users who went quiet (PyFlink API, flott prefix).

    flott run examples/event_time_timers.py

Each event moves the user's timeout timer to ``event time + 5 s`` (deleting the
previous one, kept in keyed state); when the watermark passes a timer,
``on_timer`` reports the user. Timers are per key and deduplicated, and fire in
timestamp order. Every record here arrives before the first periodic
watermark, so each user's last timer fires at the end of the input, when the
watermark jumps to the end of time (as in Flink).

Output (in some order):

    (alice,12000,17000)   (bob,9000,14000)   (carol,13000,18000)
"""

from flott.common import Types, WatermarkStrategy
from flott.common.watermark_strategy import TimestampAssigner
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.functions import KeyedProcessFunction, RuntimeContext
from flott.datastream.state import ValueStateDescriptor

EVENTS = [
    ("alice", 1_000),
    ("bob", 2_000),
    ("alice", 4_000),
    ("bob", 9_000),
    ("alice", 12_000),
    ("carol", 13_000),
]
TIMEOUT_MS = 5_000


class EventTimestamp(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class QuietUsers(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        self.last = runtime_context.get_state(ValueStateDescriptor("last", Types.LONG()))

    def process_element(self, value, ctx: KeyedProcessFunction.Context):
        previous = self.last.value()
        if previous is not None:
            ctx.timer_service().delete_event_time_timer(previous + TIMEOUT_MS)
        self.last.update(ctx.timestamp())
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + TIMEOUT_MS)

    def on_timer(self, timestamp, ctx: KeyedProcessFunction.OnTimerContext):
        yield ctx.get_current_key(), self.last.value(), timestamp


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection(
        EVENTS, type_info=Types.TUPLE([Types.STRING(), Types.LONG()])
    ).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(EventTimestamp())
    ).key_by(lambda e: e[0], key_type=Types.STRING()).process(
        QuietUsers(), output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG()])
    ).uid("quiet-users").print()
    env.execute("event_time_timers")


if __name__ == "__main__":
    main()
