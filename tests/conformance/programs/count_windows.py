from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.window import CountTrigger, GlobalWindows, PurgingTrigger


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [("a", i) for i in range(1, 8)] + [("b", i) for i in range(10, 14)]
    ds = env.from_collection(data, type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    keyed = ds.key_by(lambda t: t[0])
    keyed.count_window(3).reduce(lambda a, b: (a[0], a[1] + b[1])).map(
        lambda t: f"tumbling {t[0]} {t[1]}", output_type=Types.STRING()
    ).print()
    keyed.count_window(3, 2).reduce(lambda a, b: (a[0], a[1] + b[1])).map(
        lambda t: f"sliding {t[0]} {t[1]}", output_type=Types.STRING()
    ).print()
    keyed.window(GlobalWindows.create()).trigger(PurgingTrigger.of(CountTrigger.of(2))).reduce(
        lambda a, b: (a[0], a[1] * b[1])
    ).map(lambda t: f"global {t[0]} {t[1]}", output_type=Types.STRING()).print()
    env.execute("count_windows")


if __name__ == "__main__":
    main()
