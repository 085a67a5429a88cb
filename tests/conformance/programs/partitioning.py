"""shuffle, rebalance, rescale, forward and broadcast keep (or copy) every record."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    ds = env.from_collection(list(range(6)), type_info=Types.INT())
    ds.shuffle().map(lambda x: f"shuffle {x}", output_type=Types.STRING()).print()
    ds.rebalance().map(lambda x: f"rebalance {x}", output_type=Types.STRING()).print()
    ds.rescale().map(lambda x: f"rescale {x}", output_type=Types.STRING()).print()
    ds.broadcast().map(lambda x: f"broadcast {x}", output_type=Types.STRING()).print()
    env.execute("partitioning")


if __name__ == "__main__":
    main()
