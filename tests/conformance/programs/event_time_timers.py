from pyflink.common import Duration, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import ValueStateDescriptor


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class Timeout(KeyedProcessFunction):
    """Emits a key when no event for it came within 100 ms of event time."""

    def open(self, runtime_context: RuntimeContext):
        self.deadline = runtime_context.get_state(ValueStateDescriptor("deadline", Types.LONG()))

    def process_element(self, value, ctx: KeyedProcessFunction.Context):
        old = self.deadline.value()
        if old is not None:
            ctx.timer_service().delete_event_time_timer(old)
        new = ctx.timestamp() + 100
        self.deadline.update(new)
        ctx.timer_service().register_event_time_timer(new)

    def on_timer(self, timestamp, ctx: KeyedProcessFunction.OnTimerContext):
        yield ctx.get_current_key(), timestamp, str(ctx.time_domain())


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [("a", 0), ("b", 10), ("a", 50), ("a", 220), ("b", 400), ("c", 410), ("a", 600)]
    wm = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(5)).with_timestamp_assigner(Ts())
    env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.LONG()])) \
        .assign_timestamps_and_watermarks(wm) \
        .key_by(lambda t: t[0]) \
        .process(Timeout(), output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.STRING()])) \
        .print()
    env.execute("event_time_timers")


if __name__ == "__main__":
    main()
