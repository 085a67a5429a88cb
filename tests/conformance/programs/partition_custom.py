"""partition_custom: a Partitioner picks the subtask of each record; the next operator tags each
record with the subtask that received it."""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import MapFunction, Partitioner


class ByRemainder(Partitioner):
    def partition(self, key, num_partitions):
        return key % num_partitions


class TagSubtask(MapFunction):
    def open(self, runtime_context):
        self.index = runtime_context.get_index_of_this_subtask()
        self.parallelism = runtime_context.get_number_of_parallel_subtasks()

    def map(self, value):
        return f"{value[0]}:{value[1]} at subtask {self.index} of {self.parallelism}"


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(3)
data = env.from_collection(
    [(n, chr(ord("a") + n)) for n in range(10)], type_info=Types.TUPLE([Types.INT(), Types.STRING()])
)
(
    data.partition_custom(ByRemainder(), lambda r: r[0])
    .map(TagSubtask(), output_type=Types.STRING())
    .print()
    .set_parallelism(1)
)
# A plain function works as the partitioner too.
(
    data.partition_custom(lambda key, n: 0 if key == "b" else n - 1, lambda r: r[1])
    .map(TagSubtask(), output_type=Types.STRING())
    .filter(lambda s: s.startswith(("0:", "1:", "2:")))
    .print()
    .set_parallelism(1)
)
env.execute("partition_custom")
