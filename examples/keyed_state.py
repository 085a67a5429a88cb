"""Per-key running statistics with a KeyedProcessFunction and ValueState (PyFlink API, flott import prefix).

    flott run examples/keyed_state.py

Each sensor's readings arrive in order; the function keeps the count and the
maximum per sensor in keyed state and emits a summary every 100 readings.
"""

from flott.common import Types
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.functions import KeyedProcessFunction, RuntimeContext
from flott.datastream.state import ValueStateDescriptor


class SensorSummary(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))
        self.maximum = runtime_context.get_state(ValueStateDescriptor("max", Types.DOUBLE()))

    def process_element(self, value, ctx: KeyedProcessFunction.Context):
        sensor, reading = value
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        if self.maximum.value() is None or reading > self.maximum.value():
            self.maximum.update(reading)
        if count % 100 == 0:
            yield sensor, count, self.maximum.value()


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    readings = [(f"sensor-{i % 4}", float((i * 7919) % 1000) / 10.0) for i in range(1000)]
    env.from_collection(readings, type_info=Types.TUPLE([Types.STRING(), Types.DOUBLE()])).key_by(
        lambda r: r[0], key_type=Types.STRING()
    ).process(
        SensorSummary(), output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.DOUBLE()])
    ).uid("sensor-summary").print()
    env.execute("keyed_state")


if __name__ == "__main__":
    main()
