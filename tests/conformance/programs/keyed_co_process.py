"""Join orders with their payments by key in a KeyedCoProcessFunction; emit at the end via timers."""
from pyflink.common import Duration, Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedCoProcessFunction, RuntimeContext
from pyflink.datastream.state import ValueStateDescriptor


class Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[2]


class Match(KeyedCoProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        self.order = runtime_context.get_state(ValueStateDescriptor("order", Types.STRING()))
        self.paid = runtime_context.get_state(ValueStateDescriptor("paid", Types.INT()))

    def process_element1(self, value, ctx):
        self.order.update(value[1])
        ctx.timer_service().register_event_time_timer(1000)

    def process_element2(self, value, ctx):
        self.paid.update((self.paid.value() or 0) + int(value[1]))
        ctx.timer_service().register_event_time_timer(1000)

    def on_timer(self, timestamp, ctx):
        yield ctx.get_current_key(), self.order.value() or "?", self.paid.value() or 0


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    typ = Types.TUPLE([Types.STRING(), Types.STRING(), Types.LONG()])
    wm = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(0)).with_timestamp_assigner(Ts())
    orders = env.from_collection(
        [("o1", "book", 1), ("o2", "lamp", 2), ("o3", "pen", 3)], type_info=typ
    ).assign_timestamps_and_watermarks(wm)
    payments = env.from_collection(
        [("o1", "5", 4), ("o2", "20", 5), ("o1", "7", 6), ("o4", "1", 7)], type_info=typ
    ).assign_timestamps_and_watermarks(wm)
    orders.connect(payments).key_by(lambda o: o[0], lambda p: p[0]).process(
        Match(), output_type=Types.TUPLE([Types.STRING(), Types.STRING(), Types.INT()])
    ).print()
    env.execute("keyed_co_process")


if __name__ == "__main__":
    main()
