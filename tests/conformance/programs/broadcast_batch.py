"""Broadcast state in BATCH execution: Flink processes the whole broadcast side first, so every
element of the other side sees the complete broadcast state."""

from pyflink.common import Types
from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from pyflink.datastream.functions import BroadcastProcessFunction
from pyflink.datastream.state import MapStateDescriptor

PRICES = MapStateDescriptor("prices", Types.STRING(), Types.INT())


class Price(BroadcastProcessFunction):
    def process_element(self, value, ctx):
        prices = ctx.get_broadcast_state(PRICES)
        yield f"{value}: {prices.get(value)} of {len(list(prices.keys()))} prices"

    def process_broadcast_element(self, value, ctx):
        ctx.get_broadcast_state(PRICES).put(value[0], value[1])


env = StreamExecutionEnvironment.get_execution_environment()
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
env.set_parallelism(2)
orders = env.from_collection(["apple", "pear", "plum", "apple", "fig"], type_info=Types.STRING())
prices = env.from_collection(
    [("apple", 3), ("pear", 5), ("plum", 2), ("fig", 9), ("apple", 4)],
    type_info=Types.TUPLE([Types.STRING(), Types.INT()]),
)
priced = orders.connect(prices.broadcast(PRICES)).process(Price(), output_type=Types.STRING())
priced.print().set_parallelism(1)
env.execute("broadcast_batch")
