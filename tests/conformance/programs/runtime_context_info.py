from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import MapFunction, RuntimeContext


class Describe(MapFunction):
    def open(self, runtime_context: RuntimeContext):
        self.parallelism = runtime_context.get_number_of_parallel_subtasks()
        self.task = runtime_context.get_task_name()
        self.max_parallelism = runtime_context.get_max_number_of_parallel_subtasks()

    def map(self, value):
        return f"{value} p={self.parallelism} maxp={self.max_parallelism}"


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(3)
    env.set_max_parallelism(64)
    env.from_collection(["a", "b", "c", "d"], type_info=Types.STRING()).map(
        Describe(), output_type=Types.STRING()
    ).print()
    env.execute("runtime_context_info")


if __name__ == "__main__":
    main()
