"""Python objects in state and records with Types.PICKLED_BYTE_ARRAY."""
from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import ValueStateDescriptor


class Profile(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        self.profile = runtime_context.get_state(ValueStateDescriptor("profile", Types.PICKLED_BYTE_ARRAY()))

    def process_element(self, value, ctx):
        profile = self.profile.value() or {"tags": set(), "n": 0}
        profile["tags"].add(value["tag"])
        profile["n"] += 1
        self.profile.update(profile)
        yield f"{value['user']} n={profile['n']} tags={sorted(profile['tags'])}"


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    events = [{"user": "u1", "tag": "a"}, {"user": "u2", "tag": "b"}, {"user": "u1", "tag": "c"},
              {"user": "u1", "tag": "a"}, {"user": "u2", "tag": "z"}]
    env.from_collection(events).key_by(
        lambda e: e["user"]
    ).process(Profile(), output_type=Types.STRING()).print()
    env.execute("pickled_state_values")


if __name__ == "__main__":
    main()
