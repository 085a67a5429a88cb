from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import CoFlatMapFunction, CoMapFunction


class Tag(CoMapFunction):
    def map1(self, value):
        return "int", str(value)

    def map2(self, value):
        return "str", value


class Split(CoFlatMapFunction):
    def flat_map1(self, value):
        yield value
        yield -value

    def flat_map2(self, value):
        for ch in value:
            yield ord(ch)


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    ints = env.from_collection([1, 2, 3], type_info=Types.INT())
    strs = env.from_collection(["x", "yz"], type_info=Types.STRING())
    ints.connect(strs).map(Tag(), output_type=Types.TUPLE([Types.STRING(), Types.STRING()])).print()
    ints.connect(strs).flat_map(Split(), output_type=Types.INT()).print()
    env.execute("connect_co_map")


if __name__ == "__main__":
    main()
