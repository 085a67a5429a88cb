"""KeyedStream.sum/min/max/min_by/max_by over tuple positions."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [("a", 3, 30), ("b", 1, 10), ("a", 1, 99), ("b", 5, 50), ("a", 7, 70)]
    typ = Types.TUPLE([Types.STRING(), Types.INT(), Types.INT()])
    ds = env.from_collection(data, type_info=typ)
    keyed = ds.key_by(lambda t: t[0])
    keyed.sum(1).map(lambda t: ("sum",) + tuple(t), output_type=Types.TUPLE([Types.STRING(), Types.STRING(), Types.INT(), Types.INT()])).print()
    keyed.min(1).map(lambda t: ("min",) + tuple(t), output_type=Types.TUPLE([Types.STRING(), Types.STRING(), Types.INT(), Types.INT()])).print()
    keyed.max_by(2).map(lambda t: ("max_by",) + tuple(t), output_type=Types.TUPLE([Types.STRING(), Types.STRING(), Types.INT(), Types.INT()])).print()
    env.execute("keyed_aggregations")


if __name__ == "__main__":
    main()
