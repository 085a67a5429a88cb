"""A job that runs until cancelled, at a steady 200 records/s: numbers → keyed running count → discard.

Submitted to a session cluster with ``flott run -d`` by the dashboard tests.
"""

from flott.common import Types, WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.datagen import DataGeneratorSource, RateLimiterStrategy


class Discard:
    def invoke(self, value: object, context: object) -> None:
        pass


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.enable_checkpointing(1000)
    source = DataGeneratorSource(lambda i: i, None, RateLimiterStrategy.per_second(200), Types.LONG())
    (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "numbers")
        .uid("numbers")
        .map(lambda x: (x % 10, 1), output_type=Types.TUPLE([Types.LONG(), Types.LONG()]))
        .uid("pairs")
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .uid("counts")
        .add_sink(Discard())
        .uid("discard")
    )
    env.execute("dashboard demo: <b>steady</b> & counts")


if __name__ == "__main__":
    main()
