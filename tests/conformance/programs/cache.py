"""cache() in BATCH execution: three jobs of one environment use one cached stream (the second
reads it back, the third after invalidate() computes it again); every job's output is printed."""

from pyflink.common import Types
from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
env.set_parallelism(2)
words = env.from_collection(["a", "bb", "ccc", "dd", "e"], type_info=Types.STRING())
lengths = words.map(lambda w: (w, len(w)), output_type=Types.TUPLE([Types.STRING(), Types.INT()])).cache()
print(type(lengths).__name__)
lengths.print().set_parallelism(1)
env.execute("first")
long_words = lengths.filter(lambda t: t[1] > 1).map(lambda t: f"long {t[0]}", output_type=Types.STRING())
long_words.print().set_parallelism(1)
env.execute("second")
lengths.invalidate()
lengths.map(lambda t: t[1] * 10, output_type=Types.INT()).print().set_parallelism(1)
env.execute("third")
