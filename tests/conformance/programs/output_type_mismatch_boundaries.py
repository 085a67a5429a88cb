"""Where a value that does not fit its declared output_type fails the job, in both runtime modes,
with PyFlink's fusion of chained Python functions on and off (python.operator-chaining.enabled).

A map declared INT that returns a str hands the str on to a Python function fused after it (the
job succeeds, the next map sees a str); the job fails where the records leave the fused operator:
a print sink, a key_by, and, with python.operator-chaining.enabled false, the next map. The word
count's pair map declared TUPLE(STRING, INT) fails before the shuffle when it emits (1, 'a') or a
list; in BATCH mode that is where flott's combiner runs.
"""

from pyflink.common import Configuration, Types
from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment

ERRORS = ("an integer is required", "'int' object has no attribute 'encode'", "Expected tuple, got list")
PAIR = Types.TUPLE([Types.STRING(), Types.INT()])


def str_for_int(env):
    return env.from_collection([1, 2]).map(lambda x: "str", output_type=Types.INT())


def next_map_sees(env, label):
    str_for_int(env).map(lambda v: f"{label}: next map sees {v!r} {type(v).__name__}").print()


def print_sink(env, label):
    str_for_int(env).print()


def key_by(env, label):
    str_for_int(env).key_by(lambda v: 0).map(lambda v: f"{label}: {v!r}").print()


def word_count(pair):
    def build(env, label):
        words = env.from_collection(["a b", "a"]).flat_map(lambda line: line.split(), output_type=Types.STRING())
        counts = words.map(pair, output_type=PAIR).key_by(lambda p: p[0]).reduce(lambda a, b: (a[0], a[1] + b[1]))
        counts.map(lambda p: f"{label}: {p!r}").print()

    return build


CASES = {
    "map(INT)->map": next_map_sees,
    "map(INT)->print": print_sink,
    "map(INT)->key_by": key_by,
    "word count": word_count(lambda w: (w, 1)),
    "word count (1, w)": word_count(lambda w: (1, w)),
    "word count [w, 1]": word_count(lambda w: [w, 1]),
}


def main() -> None:
    for mode in (RuntimeExecutionMode.STREAMING, RuntimeExecutionMode.BATCH):
        for fused in ("true", "false"):
            for name, build in CASES.items():
                config = Configuration()
                config.set_string("python.operator-chaining.enabled", fused)
                env = StreamExecutionEnvironment.get_execution_environment(config)
                env.set_parallelism(1)
                env.set_runtime_mode(mode)
                label = f"{name} {'BATCH' if mode == RuntimeExecutionMode.BATCH else 'STREAMING'} fused={fused}"
                build(env, label)
                try:
                    env.execute(label)
                    print(f"{label}: succeeds", flush=True)
                except Exception as e:  # the job's failure, PyFlink's Py4JJavaError or flott's
                    known = [m for m in ERRORS if m in str(e)]
                    print(f"{label}: fails with {known[0] if known else type(e).__name__}", flush=True)


if __name__ == "__main__":
    main()
