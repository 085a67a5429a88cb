from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    numbers = env.from_collection(list(range(100)), type_info=Types.INT())
    first = numbers.filter(lambda x: x % 7 == 0).execute_and_collect(limit=4)
    print("limited", type(first).__name__, first)

    few = env.from_collection(["a", "b"], type_info=Types.STRING())
    everything = few.map(lambda s: s.upper(), output_type=Types.STRING()).execute_and_collect("few", limit=10)
    print("fewer than the limit", everything)


if __name__ == "__main__":
    main()
