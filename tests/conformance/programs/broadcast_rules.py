"""Rules broadcast to a keyed stream: a KeyedBroadcastProcessFunction applies per-key thresholds.

The keyed side only buffers its values in keyed state and sets an event-time timer; the timers
fire on the final watermark, after both (bounded) inputs ended, so every rule has arrived by then
and the output does not depend on how the two inputs interleave.
"""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedBroadcastProcessFunction
from pyflink.datastream.state import ListStateDescriptor, MapStateDescriptor

RULES = MapStateDescriptor("rules", Types.STRING(), Types.INT())


class ApplyRules(KeyedBroadcastProcessFunction):
    def open(self, runtime_context):
        self.values = runtime_context.get_list_state(ListStateDescriptor("values", Types.INT()))

    def process_element(self, value, ctx):
        self.values.add(value[1])
        ctx.timer_service().register_event_time_timer(1000)

    def process_broadcast_element(self, value, ctx):
        rules = ctx.get_broadcast_state(RULES)
        name, limit = value
        if limit < 0:
            rules.remove(name)
        else:
            rules.put(name, limit)

    def on_timer(self, timestamp, ctx):
        key = ctx.get_current_key()
        rules = ctx.get_broadcast_state(RULES)
        values = sorted(self.values.get())
        if rules.contains(key):
            limit = rules.get(key)
            above = [v for v in values if v > limit]
            yield f"{key} limit={limit} above={above} ts={timestamp}"
        else:
            yield f"{key} no rule, {len(values)} values, rules={sorted(rules.keys())}"


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
readings = env.from_collection(
    [("a", 1), ("b", 7), ("a", 9), ("c", 4), ("b", 2), ("a", 5), ("d", 3), ("c", 8)],
    type_info=Types.TUPLE([Types.STRING(), Types.INT()]),
)
rules = env.from_collection(
    [("a", 4), ("b", 1), ("c", 10), ("b", 5), ("d", 0), ("d", -1)],
    type_info=Types.TUPLE([Types.STRING(), Types.INT()]),
)
(
    readings.key_by(lambda r: r[0], key_type=Types.STRING())
    .connect(rules.broadcast(RULES))
    .process(ApplyRules(), output_type=Types.STRING())
    .print()
    .set_parallelism(1)
)
env.execute("broadcast_rules")
