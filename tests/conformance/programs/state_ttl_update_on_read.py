"""State TTL update types: reads keep OnReadAndWrite state alive, OnCreateAndWrite state expires.

A 6 s TTL; the state is written, read after 4 s and read again 4 s later. Under OnReadAndWrite
the first read restarted the TTL (value and the map entry that was read survive); under
OnCreateAndWrite, and for the map entry nobody read, 8 s have passed: gone.
Bundles of one record and no state cache make PyFlink apply state reads and writes as each
record is processed, which flott always does.
"""

import time

from pyflink.common import Configuration, Types
from pyflink.common.time import Time
from pyflink.datastream import KeyedProcessFunction, RuntimeContext, StreamExecutionEnvironment
from pyflink.datastream.state import MapStateDescriptor, StateTtlConfig, ValueStateDescriptor


def config(update_type):
    return StateTtlConfig.new_builder(Time.seconds(6)).set_update_type(update_type).build()


class Touch(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        on_write = ValueStateDescriptor("on_write", Types.STRING())
        on_write.enable_time_to_live(config(StateTtlConfig.UpdateType.OnCreateAndWrite))
        on_read = ValueStateDescriptor("on_read", Types.STRING())
        on_read.enable_time_to_live(config(StateTtlConfig.UpdateType.OnReadAndWrite))
        entries = MapStateDescriptor("entries", Types.STRING(), Types.STRING())
        entries.enable_time_to_live(config(StateTtlConfig.UpdateType.OnReadAndWrite))
        self.on_write = runtime_context.get_state(on_write)
        self.on_read = runtime_context.get_state(on_read)
        self.entries = runtime_context.get_map_state(entries)

    def process_element(self, value, ctx: "KeyedProcessFunction.Context"):
        key, op = value
        if op == "write":
            self.on_write.update("w")
            self.on_read.update("r")
            self.entries.put("read", "1")
            self.entries.put("unread", "2")
            yield f"{key} written"
        elif op == "pause":
            time.sleep(4)
        elif op == "read":
            yield (
                f"{key} read: on_write={self.on_write.value()} on_read={self.on_read.value()} "
                f"entry={self.entries.get('read')}"
            )
        elif op == "final":
            yield (
                f"{key} final: on_write={self.on_write.value()} on_read={self.on_read.value()} "
                f"entries={sorted(self.entries.keys())}"
            )


def main():
    conf = Configuration()
    conf.set_integer("python.fn-execution.bundle.size", 1)
    conf.set_integer("python.state.cache-size", 0)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_parallelism(1)
    records = [
        ("k", "write"),
        ("z", "pause"),
        ("k", "read"),
        ("z", "pause"),
        ("k", "final"),
    ]
    (
        env.from_collection(records, type_info=Types.TUPLE([Types.STRING(), Types.STRING()]))
        .key_by(lambda r: r[0], key_type=Types.STRING())
        .process(Touch(), output_type=Types.STRING())
        .print()
    )
    env.execute("state_ttl_update_on_read")


if __name__ == "__main__":
    main()
