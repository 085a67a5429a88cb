from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import MapFunction, RuntimeContext


class CountingMap(MapFunction):
    def open(self, runtime_context: RuntimeContext):
        group = runtime_context.get_metrics_group()
        self.records = group.add_group("my_group").counter("records")
        self.by_kind = group.add_group("kind", "fruit").counter("seen")
        self.rate = group.meter("rate", time_span_in_seconds=30)
        self.lengths = group.distribution("lengths")
        self.last_length = 0
        group.gauge("last_length", lambda: self.last_length)

    def map(self, value):
        self.records.inc()
        self.by_kind.inc(2)
        self.by_kind.dec()
        self.rate.mark_event()
        self.lengths.update(len(value))
        self.last_length = len(value)
        return f"{value}:{len(value)}"


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_collection(["apple", "fig", "banana", "kiwi"], type_info=Types.STRING()).map(
        CountingMap(), output_type=Types.STRING()
    ).print()
    env.execute("user_metrics")


if __name__ == "__main__":
    main()
