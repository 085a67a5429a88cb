"""Small JobGraphs for REST tests, built with flott's DataStream API.

Helper classes are defined inside the builders so cloudpickle ships them by
value to the TaskExecutor processes (which cannot import the tests package).
"""

from __future__ import annotations

import warnings
from typing import Any

from flott.common import Types, WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.datagen import DataGeneratorSource, RateLimiterStrategy
from flott.graph import MissingUidWarning
from flott.runtime.jobgraph import JobGraph


def _discard() -> Any:
    class Discard:
        def invoke(self, value: Any, context: Any) -> None:
            pass

    return Discard()


def bounded_job(
    name: str = "bounded", n: int = 50, parallelism: int = 1, python_files: tuple[str, ...] = ()
) -> JobGraph:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    for f in python_files:
        env.add_python_file(f)
    env.from_collection(list(range(n))).map(lambda x: x * 2).add_sink(_discard())
    return env.get_job_graph(name)


def unbounded_job(name: str = "unbounded", parallelism: int = 2, rate: float = 500.0) -> JobGraph:
    """Runs until cancelled: generator → map → keyBy → map → discard (two vertices)."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    source = DataGeneratorSource(lambda i: i, None, RateLimiterStrategy.per_second(rate), Types.LONG())
    (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "generator")
        .map(lambda x: x + 1)
        .key_by(lambda x: x % 8)
        .map(lambda x: x)
        .add_sink(_discard())
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingUidWarning)  # no savepoints in these tests
        return env.get_job_graph(name)


def failing_job(name: str = "failing") -> JobGraph:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    def boom(x: int) -> int:
        return x // (x - 3)  # ZeroDivisionError at x == 3

    env.from_collection(list(range(10))).map(boom).add_sink(_discard())
    return env.get_job_graph(name)
