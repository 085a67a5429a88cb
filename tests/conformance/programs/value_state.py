from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import ValueStateDescriptor


class RunningMax(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        self.best = runtime_context.get_state(ValueStateDescriptor("best", Types.INT()))

    def process_element(self, value, ctx: KeyedProcessFunction.Context):
        current = self.best.value()
        if current is None or value[1] > current:
            self.best.update(value[1])
            yield value[0], value[1], "new max"
        else:
            yield value[0], value[1], f"max stays {current}"


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    data = [("x", 3), ("y", 5), ("x", 1), ("x", 8), ("y", 5), ("y", 9)]
    env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.INT()])).key_by(
        lambda t: t[0], key_type=Types.STRING()
    ).process(RunningMax(), output_type=Types.TUPLE([Types.STRING(), Types.INT(), Types.STRING()])).print()
    env.execute("value_state")


if __name__ == "__main__":
    main()
