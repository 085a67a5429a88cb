"""State TTL: a second-long TTL expires across a five-second pause, an hour-long one does not.

Every state kind with TTL: value (expired -> None), list and map (per element / per entry:
only what was written after the pause is left), reducing (an expired value is not folded into).
Bundles of one record make PyFlink write state through to its backend (where TTL timestamps are
taken) as each record is processed, which flott always does.
"""

import time

from pyflink.common import Configuration, Types
from pyflink.common.time import Time
from pyflink.datastream import KeyedProcessFunction, RuntimeContext, StreamExecutionEnvironment
from pyflink.datastream.state import (
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)


def ttl(descriptor, seconds):
    descriptor.enable_time_to_live(StateTtlConfig.new_builder(Time.seconds(seconds)).build())
    return descriptor


class Remember(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        self.short = runtime_context.get_state(ttl(ValueStateDescriptor("short", Types.STRING()), 1))
        self.long = runtime_context.get_state(ttl(ValueStateDescriptor("long", Types.STRING()), 3600))
        self.plain = runtime_context.get_state(ValueStateDescriptor("plain", Types.STRING()))
        self.events = runtime_context.get_list_state(ttl(ListStateDescriptor("events", Types.STRING()), 1))
        self.seen = runtime_context.get_map_state(
            ttl(MapStateDescriptor("seen", Types.STRING(), Types.INT()), 1)
        )
        self.total = runtime_context.get_reducing_state(
            ttl(ReducingStateDescriptor("total", lambda a, b: a + b, Types.INT()), 1)
        )

    def process_element(self, value, ctx: "KeyedProcessFunction.Context"):
        key, op = value
        if op == "set":
            self.short.update(key + "-short")
            self.long.update(key + "-long")
            self.plain.update(key + "-plain")
            self.events.add("before")
            self.seen.put("before", 1)
            self.total.add(1)
        elif op == "pause":
            time.sleep(5)
        elif op == "get":
            self.events.add("after")
            self.seen.put("after", 2)
            self.total.add(10)
            yield (
                f"{key}: short={self.short.value()} long={self.long.value()} plain={self.plain.value()} "
                f"events={list(self.events.get())} seen={sorted(self.seen.keys())} total={self.total.get()}"
            )


def main():
    config = Configuration()
    config.set_integer("python.fn-execution.bundle.size", 1)
    config.set_integer("python.state.cache-size", 0)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    records = [("a", "set"), ("b", "set"), ("z", "pause"), ("a", "get"), ("b", "get")]
    (
        env.from_collection(records, type_info=Types.TUPLE([Types.STRING(), Types.STRING()]))
        .key_by(lambda r: r[0], key_type=Types.STRING())
        .process(Remember(), output_type=Types.STRING())
        .print()
    )
    env.execute("state_ttl_expiry")


if __name__ == "__main__":
    main()
