from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import ListStateDescriptor


class LastThree(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        self.seen = runtime_context.get_list_state(ListStateDescriptor("seen", Types.INT()))

    def process_element(self, value, ctx):
        self.seen.add(value[1])
        items = list(self.seen.get())
        if len(items) > 3:
            items = items[-3:]
            self.seen.update(items)
        yield value[0], ",".join(str(i) for i in items)


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [("k", i) for i in range(1, 7)] + [("j", 10), ("j", 20)]
    env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.INT()])).key_by(
        lambda t: t[0]
    ).process(LastThree(), output_type=Types.TUPLE([Types.STRING(), Types.STRING()])).print()
    env.execute("list_state")


if __name__ == "__main__":
    main()
