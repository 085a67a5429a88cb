"""Where a declared output_type applies: where PyFlink's fused Python operator ends.

A map declared INT that returns 2.7 hands 2.7 on to the Python functions fused after it (map,
filter, flat_map, process; after a keyed function too) and an int 2 to anything else: a
watermark assigner, a shuffle, a second consumer, an operator that starts a new chain or had
chaining disabled. The second job runs with env.disable_operator_chaining(), which splits Java's
chains (every operator in a task of its own) but not PyFlink's fused Python functions: the values
are the same.
"""

from pyflink.common import Types, WatermarkStrategy
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import KeyedProcessFunction, ProcessFunction, StreamExecutionEnvironment

JOB = ["chained"]


def seen(label):
    return lambda v: f"{JOB[0]} {label}: {v!r} {type(v).__name__}"


class FirstMilli(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return 1


class EmitFloat(ProcessFunction):
    def process_element(self, value, ctx):
        yield 2.7


class KeyedEmitFloat(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield 2.7


def build(env: StreamExecutionEnvironment) -> None:
    one = env.from_collection(["x"])

    def typed():
        return one.map(lambda _: 2.7, output_type=Types.INT())

    typed().map(seen("map->map")).print()
    typed().filter(lambda v: True).map(seen("map->filter->map")).print()
    typed().flat_map(lambda v: [v]).map(seen("map->flat_map->map")).print()
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(FirstMilli())
    typed().assign_timestamps_and_watermarks(strategy).map(seen("map->watermarks->map")).print()
    one.process(EmitFloat(), output_type=Types.INT()).map(seen("process->map")).print()
    one.key_by(lambda x: x).process(KeyedEmitFloat(), output_type=Types.INT()).map(
        seen("keyed process->map")
    ).print()
    one.key_by(lambda x: x).map(lambda _: 2.7, output_type=Types.INT()).map(seen("keyed map->map")).print()
    typed().map(seen("start_new_chain")).start_new_chain().print()
    shared = typed()
    shared.map(seen("first of two consumers")).print()
    shared.map(seen("second of two consumers")).print()
    typed().key_by(lambda v: 0).map(seen("map->key_by->map")).print()
    typed().disable_chaining().map(seen("disable_chaining->map")).print()
    typed().map(lambda v: ("k", v), output_type=Types.TUPLE([Types.STRING(), Types.DOUBLE()])).map(
        seen("map->map(TUPLE)->map")
    ).print()


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    build(env)
    env.execute("output_type_fusion_boundaries")
    JOB[0] = "unchained"
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.disable_operator_chaining()
    build(env)
    env.execute("output_type_fusion_boundaries without chaining")


if __name__ == "__main__":
    main()
