"""A two-input operator: enrich orders with customer names (connect + KeyedCoProcessFunction).

    flott run examples/connected_streams.py

Both streams are keyed by customer id, so a customer and its orders meet in the
same subtask and share keyed state: a customer record stores the name, an order
is emitted with the name, or waits (ListState) until its customer arrives. A
side output reports orders above 100 (``yield output_tag, value``).

Output (in some order):

    (o1,Ada,30)   (o2,Grace,250)   (o3,Ada,70)   (o4,Linus,120)   big> (o2,250)   big> (o4,120)
"""

from flott.common import Types
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.functions import KeyedCoProcessFunction, RuntimeContext
from flott.datastream.output_tag import OutputTag
from flott.datastream.state import ListStateDescriptor, ValueStateDescriptor

CUSTOMERS = [("c1", "Ada"), ("c2", "Grace"), ("c3", "Linus")]
ORDERS = [("o1", "c1", 30), ("o2", "c2", 250), ("o3", "c1", 70), ("o4", "c3", 120)]
BIG = OutputTag("big-orders", Types.TUPLE([Types.STRING(), Types.INT()]))


class EnrichOrders(KeyedCoProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        self.name = runtime_context.get_state(ValueStateDescriptor("name", Types.STRING()))
        self.waiting = runtime_context.get_list_state(
            ListStateDescriptor("waiting", Types.TUPLE([Types.STRING(), Types.STRING(), Types.INT()]))
        )

    def process_element1(self, customer, ctx):
        self.name.update(customer[1])
        for order in self.waiting.get():
            yield from self._emit(order, customer[1])
        self.waiting.clear()

    def process_element2(self, order, ctx):
        name = self.name.value()
        if name is None:
            self.waiting.add(order)
        else:
            yield from self._emit(order, name)

    def _emit(self, order, name):
        if order[2] > 100:
            yield BIG, (order[0], order[2])
        yield order[0], name, order[2]


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    customers = env.from_collection(CUSTOMERS, type_info=Types.TUPLE([Types.STRING(), Types.STRING()]))
    orders = env.from_collection(ORDERS, type_info=Types.TUPLE([Types.STRING(), Types.STRING(), Types.INT()]))
    enriched = (
        customers.connect(orders)
        .key_by(lambda c: c[0], lambda o: o[1], key_type=Types.STRING())
        .process(EnrichOrders(), output_type=Types.TUPLE([Types.STRING(), Types.STRING(), Types.INT()]))
        .uid("enrich-orders")
    )
    enriched.print()
    enriched.get_side_output(BIG).print("big")
    env.execute("connected_streams")


if __name__ == "__main__":
    main()
