from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import FilterFunction, FlatMapFunction, MapFunction


class Parse(MapFunction):
    def map(self, value):
        name, score = value.split(":")
        return name, int(score)


class Passed(FilterFunction):
    def __init__(self, threshold):
        self.threshold = threshold

    def filter(self, value):
        return value[1] >= self.threshold


class Explode(FlatMapFunction):
    def flat_map(self, value):
        for i in range(value[1] // 40):
            yield value[0], i


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    raw = env.from_collection(["ann:91", "bob:35", "cy:77", "dee:50", "eve:120"], type_info=Types.STRING())
    pairs = raw.map(Parse(), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
    pairs.filter(Passed(50)).flat_map(
        Explode(), output_type=Types.TUPLE([Types.STRING(), Types.INT()])
    ).print()
    env.execute("function_classes")


if __name__ == "__main__":
    main()
