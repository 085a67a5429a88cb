from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [("a", 1, True, 1.5), ("b", 2, False, 2.5)]
    typ = Types.TUPLE([Types.STRING(), Types.INT(), Types.BOOLEAN(), Types.DOUBLE()])
    env.from_collection(data, type_info=typ).project(3, 0).print()
    env.execute("project_fields")


if __name__ == "__main__":
    main()
