"""An environment runs a second job after the first; only what the second pipeline built runs again."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection(["first"], type_info=Types.STRING()).print("job1")
    env.execute("job one")
    env.from_collection(["second"], type_info=Types.STRING()).print("job2")
    env.execute("job two")


if __name__ == "__main__":
    main()
