"""A BroadcastProcessFunction on a non-keyed stream, with two broadcast states and a side output.

Only the broadcast side's output depends on broadcast state: each subtask receives the broadcast
elements in their order, so its lines are the same whichever way the inputs interleave (each
of the two subtasks prints them once). The non-broadcast side's output does not read the state.
"""

from pyflink.common import Types
from pyflink.datastream import OutputTag, StreamExecutionEnvironment
from pyflink.datastream.functions import BroadcastProcessFunction
from pyflink.datastream.state import MapStateDescriptor

NAMES = MapStateDescriptor("names", Types.INT(), Types.STRING())
COUNTS = MapStateDescriptor("counts", Types.STRING(), Types.INT())
ODD = OutputTag("odd", Types.STRING())


class Enrich(BroadcastProcessFunction):
    def process_element(self, value, ctx):
        if value % 2:
            yield ODD, f"odd {value}"
        else:
            yield f"even {value}"

    def process_broadcast_element(self, value, ctx):
        names = ctx.get_broadcast_state(NAMES)
        counts = ctx.get_broadcast_state(COUNTS)
        number, name = value
        names.put(number, name)
        counts.put(name, (counts.get(name) or 0) + 1)
        yield f"names={sorted(names.items())} counts={sorted(counts.items())} empty={counts.is_empty()}"


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
numbers = env.from_collection([1, 2, 3, 4, 5, 6], type_info=Types.INT())
names = env.from_collection(
    [(1, "one"), (2, "two"), (3, "one")], type_info=Types.TUPLE([Types.INT(), Types.STRING()])
)
out = numbers.connect(names.broadcast(NAMES, COUNTS)).process(Enrich(), output_type=Types.STRING())
out.print().set_parallelism(1)
out.get_side_output(ODD).print().set_parallelism(1)
env.execute("broadcast_process")
