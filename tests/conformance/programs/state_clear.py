"""Clearing state: a session that resets on a marker."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import ListStateDescriptor, ValueStateDescriptor


class Sessions(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        self.items = runtime_context.get_list_state(ListStateDescriptor("items", Types.STRING()))
        self.n = runtime_context.get_state(ValueStateDescriptor("n", Types.INT()))

    def process_element(self, value, ctx):
        if value[1] == "END":
            yield value[0], "|".join(self.items.get()), self.n.value() or 0
            self.items.clear()
            self.n.clear()
        else:
            self.items.add(value[1])
            self.n.update((self.n.value() or 0) + 1)


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [("s", "a"), ("s", "b"), ("s", "END"), ("s", "c"), ("s", "END"), ("t", "END")]
    env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.STRING()])).key_by(
        lambda t: t[0]
    ).process(Sessions(), output_type=Types.TUPLE([Types.STRING(), Types.STRING(), Types.INT()])).print()
    env.execute("state_clear")


if __name__ == "__main__":
    main()
