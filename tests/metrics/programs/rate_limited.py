"""24,000 records at 2,000/s through a chain that drops them all: the sources' rate is the only
sign of progress (``flott run``'s progress line must show it)."""

from flott.common import Types, WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.datagen import DataGeneratorSource, RateLimiterStrategy

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
source = DataGeneratorSource(lambda i: i, 24000, RateLimiterStrategy.per_second(2000.0), Types.LONG())
env.from_source(source, WatermarkStrategy.no_watermarks(), "gen").filter(lambda x: x < 0).print()
env.execute("rate-limited")
