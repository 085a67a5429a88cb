from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import AggregateFunction, KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import AggregatingStateDescriptor, ReducingStateDescriptor


class Average(AggregateFunction):
    def create_accumulator(self):
        return 0, 0

    def add(self, value, accumulator):
        return accumulator[0] + value, accumulator[1] + 1

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, a, b):
        return a[0] + b[0], a[1] + b[1]


class Stats(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        self.total = runtime_context.get_reducing_state(
            ReducingStateDescriptor("total", lambda a, b: a + b, Types.LONG())
        )
        self.mean = runtime_context.get_aggregating_state(
            AggregatingStateDescriptor("mean", Average(), Types.TUPLE([Types.LONG(), Types.LONG()]))
        )

    def process_element(self, value, ctx):
        self.total.add(value[1])
        self.mean.add(value[1])
        yield value[0], self.total.get(), self.mean.get()


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [("a", 2), ("b", 10), ("a", 4), ("a", 9), ("b", 1)]
    env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.LONG()])).key_by(
        lambda t: t[0]
    ).process(Stats(), output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.DOUBLE()])).print()
    env.execute("reducing_aggregating_state")


if __name__ == "__main__":
    main()
