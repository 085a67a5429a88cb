"""uid, name, set_description and chaining settings do not change results."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    ds = env.from_collection(list(range(10)), type_info=Types.INT()).name("numbers").uid("numbers")
    doubled = ds.map(lambda x: x * 2, output_type=Types.INT()).name("double").uid("double").set_description("x2")
    odd = doubled.filter(lambda x: x % 4 == 2).disable_chaining().name("keep 2 mod 4")
    odd.map(lambda x: x + 1, output_type=Types.INT()).start_new_chain().print()
    env.execute("chained_names_and_uids")


if __name__ == "__main__":
    main()
