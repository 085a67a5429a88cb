"""``DataStream.cache()`` on the embedded cluster: BATCH jobs of one environment compute a cached
stream once and read it back afterwards; STREAMING jobs use it as is (Flink's semantics).

The cached stream comes out of a map that appends every record it handles to a file, so a test
sees how often the operators before the cache really ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Encoder, Types
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from flott.datastream.connectors.file_sink import FileSink
from flott.datastream.data_stream import CachedDataStream
from flott.datastream.functions import MapFunction
from flott.errors import JobExecutionError, NotYetSupportedError
from tests.e2e.conftest import read_output_lines

N = 500


class Counted(MapFunction):
    def __init__(self, log: Path, fail: bool = False) -> None:
        self.log = str(log)
        self.fail = fail

    def map(self, value: Any) -> Any:
        if self.fail:
            raise RuntimeError("the first job fails")
        with open(self.log, "a") as f:
            f.write(f"{value}\n")
        return value * 10


def calls(log: Path) -> int:
    return len(log.read_text().split()) if log.exists() else 0


def sink(out: Path) -> FileSink:
    return FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build()


def environment(mode: RuntimeExecutionMode) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(mode)
    env.set_parallelism(2)
    return env


def cached_numbers(env: StreamExecutionEnvironment, log: Path, fail: bool = False) -> CachedDataStream:
    numbers = env.from_collection(list(range(N)), type_info=Types.INT())
    return numbers.map(Counted(log, fail), output_type=Types.INT()).cache()


def lines_as_ints(out: Path) -> list[int]:
    return sorted(int(line) for line in read_output_lines(out))


def test_batch_jobs_compute_a_cached_stream_once_until_it_is_invalidated(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    log = tmp_path / "calls"
    env = environment(RuntimeExecutionMode.BATCH)
    cached = cached_numbers(env, log)
    assert isinstance(cached, CachedDataStream)
    cached.sink_to(sink(tmp_path / "first"))
    env.execute("first")
    assert calls(log) == N and lines_as_ints(tmp_path / "first") == [n * 10 for n in range(N)]

    cached.map(lambda x: x + 1, output_type=Types.INT()).sink_to(sink(tmp_path / "second"))
    plan = env.get_job_graph("second")
    assert [v.name for v in plan.vertices] == ["Source: CacheRead -> Map -> Sink: Writer"], "read back"
    env.execute("second")
    assert calls(log) == N, "the second job read the cache instead of running the map again"
    assert lines_as_ints(tmp_path / "second") == [n * 10 + 1 for n in range(N)]

    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    cached.sink_to(sink(tmp_path / "streaming"))
    env.execute("streaming")
    assert calls(log) == N, "a STREAMING job reads a stream cached by an earlier BATCH job"
    assert lines_as_ints(tmp_path / "streaming") == [n * 10 for n in range(N)]
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)

    cached.invalidate()
    cached.sink_to(sink(tmp_path / "third"))
    env.execute("third")
    assert calls(log) == 2 * N, "invalidated: computed again (and cached again)"
    assert lines_as_ints(tmp_path / "third") == [n * 10 for n in range(N)]

    env.close()
    cached.sink_to(sink(tmp_path / "fourth"))
    env.execute("fourth")
    assert calls(log) == 3 * N, "env.close() dropped the cache"


def test_a_failed_job_caches_nothing(tmp_path: Path, embedded: EmbeddedExecutor) -> None:
    env = environment(RuntimeExecutionMode.BATCH)
    cached = cached_numbers(env, tmp_path / "calls", fail=True)
    cached.sink_to(sink(tmp_path / "first"))
    with pytest.raises(JobExecutionError):
        env.execute("fails")
    assert cached.transformation.cached_dir is None  # type: ignore[attr-defined]
    env.close()


def test_streaming_jobs_use_an_uncached_stream_as_is(tmp_path: Path, embedded: EmbeddedExecutor) -> None:
    log = tmp_path / "calls"
    env = environment(RuntimeExecutionMode.STREAMING)
    cached = cached_numbers(env, log)
    cached.sink_to(sink(tmp_path / "first"))
    assert not any("CacheWrite" in v.name for v in env.get_job_graph().vertices), "Flink writes no cache"
    env.execute("first")
    cached.sink_to(sink(tmp_path / "second"))
    env.execute("second")
    assert calls(log) == 2 * N
    assert lines_as_ints(tmp_path / "second") == [n * 10 for n in range(N)]


def test_what_cache_refuses_at_plan_time(tmp_path: Path) -> None:
    env = environment(RuntimeExecutionMode.BATCH)
    numbers = env.from_collection([1, 2, 3], type_info=Types.INT())
    with pytest.raises(ValueError, match="Cache for KeyedStream is not supported"):
        numbers.key_by(lambda x: x).cache()
    with pytest.raises(ValueError, match=r"cache\(\) applies to the output of an operator"):
        numbers.rebalance().cache()
    cached = numbers.map(lambda x: x).cache()
    for call in (lambda: cached.set_parallelism(2), lambda: cached.uid("x"), lambda: cached.name("x")):
        with pytest.raises(ValueError, match="for CachedDataStream is not supported"):
            call()
    timestamped = numbers.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(_Stamp())
    )
    timestamped.map(lambda x: x).cache().print()
    with pytest.raises(NotYetSupportedError, match="event timestamps"):
        env.get_job_graph()


class _Stamp:
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value)
