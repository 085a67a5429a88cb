"""A custom trigger counting its firings in a metric group of the window operator (TriggerContext)."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.state import ReducingStateDescriptor
from pyflink.datastream.window import GlobalWindows, Trigger, TriggerResult


class EveryTwo(Trigger):
    def __init__(self):
        self._count = ReducingStateDescriptor("count", lambda a, b: a + b, Types.LONG())

    def on_element(self, element, timestamp, window, ctx):
        ctx.get_metric_group().add_group("trigger").counter("elements").inc()
        count = ctx.get_partitioned_state(self._count)
        count.add(1)
        if count.get() >= 2:
            count.clear()
            return TriggerResult.FIRE_AND_PURGE
        return TriggerResult.CONTINUE

    def on_processing_time(self, time, window, ctx):
        return TriggerResult.CONTINUE

    def on_event_time(self, time, window, ctx):
        return TriggerResult.CONTINUE

    def on_merge(self, window, ctx):
        pass

    def clear(self, window, ctx):
        ctx.get_partitioned_state(self._count).clear()


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    data = [("a", 1), ("b", 2), ("a", 3), ("b", 4), ("a", 5), ("a", 6)]
    typ = Types.TUPLE([Types.STRING(), Types.INT()])
    env.from_collection(data, type_info=typ).key_by(lambda t: t[0]).window(GlobalWindows.create()).trigger(
        EveryTwo()
    ).reduce(lambda x, y: (x[0], x[1] + y[1]), output_type=typ).print()
    env.execute("trigger_metrics")


if __name__ == "__main__":
    main()
