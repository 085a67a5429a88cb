from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeySelector, ReduceFunction


class ByRegionAndYear(KeySelector):
    def get_key(self, value):
        return value[0], value[1]


class Sum(ReduceFunction):
    def reduce(self, a, b):
        return a[0], a[1], a[2] + b[2]


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    data = [("eu", 2020, 5), ("us", 2020, 1), ("eu", 2021, 2), ("eu", 2020, 4), ("us", 2020, 7)]
    typ = Types.TUPLE([Types.STRING(), Types.INT(), Types.INT()])
    env.from_collection(data, type_info=typ).key_by(ByRegionAndYear()).reduce(Sum()).print()
    env.execute("key_selector_class")


if __name__ == "__main__":
    main()
