from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import MapStateDescriptor


class WordsPerUser(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        self.counts = runtime_context.get_map_state(MapStateDescriptor("counts", Types.STRING(), Types.INT()))

    def process_element(self, value, ctx):
        user, word = value
        n = (self.counts.get(word) or 0) + 1
        self.counts.put(word, n)
        if word == "stop":
            self.counts.remove("stop")
            summary = ";".join(f"{k}={v}" for k, v in sorted(self.counts.items()))
            yield user, summary, self.counts.contains("stop"), len(list(self.counts.keys()))


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    data = [("u1", "hi"), ("u2", "yo"), ("u1", "hi"), ("u1", "ok"), ("u2", "yo"), ("u1", "stop"), ("u2", "stop")]
    env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.STRING()])).key_by(
        lambda t: t[0]
    ).process(
        WordsPerUser(),
        output_type=Types.TUPLE([Types.STRING(), Types.STRING(), Types.BOOLEAN(), Types.INT()]),
    ).print()
    env.execute("map_state")


if __name__ == "__main__":
    main()
