"""Async I/O on a real embedded cluster: order, completeness, capacity, timeouts, retries, failures.

One job runs most behaviours side by side (each branch writes its own FileSink
directory), so the cluster starts once. The functions make completion order
deterministic with asyncio events, not with sleeps: record 0 completes only
after record 5 did, so an ordered wait must hold 1..5 back and an unordered
wait must let them overtake.
"""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any

import pytest

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Encoder, Types
from flott.common.restart_strategy import RestartStrategies
from flott.common.time import Time
from flott.common.watermark_strategy import TimestampAssigner, WatermarkStrategy
from flott.datastream import (
    AsyncDataStream,
    AsyncFunction,
    AsyncRetryStrategy,
    DataStream,
    RuntimeContext,
    StreamExecutionEnvironment,
    async_retry_predicates,
)
from flott.datastream.connectors.file_system import FileSink
from flott.datastream.window import TumblingEventTimeWindows
from flott.errors import JobExecutionError
from tests.e2e.conftest import read_output_lines

N = 60
CAPACITY = 5


class ZeroWaitsForFive(AsyncFunction):
    """Record 0's lookup completes only once record 5's has: 1..5 finish before 0."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.five_done: asyncio.Event | None = None

    async def async_invoke(self, value: int) -> list[str]:
        if self.five_done is None:
            self.five_done = asyncio.Event()
        if value == 0:
            await self.five_done.wait()
        elif value == 5:
            self.five_done.set()
        return [str(value)]


class CountInFlight(AsyncFunction):
    """Each lookup waits (up to 2 s) until CAPACITY lookups are in flight; reports how many it saw."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.in_flight = 0
        self.most = 0

    async def async_invoke(self, value: int) -> list[str]:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            for _ in range(400):
                if self.in_flight >= CAPACITY:
                    break
                await asyncio.sleep(0.005)
            return [f"{value},{self.most}"]
        finally:
            self.in_flight -= 1


class OddOnesHang(AsyncFunction):
    async def async_invoke(self, value: int) -> list[str]:
        if value % 2:
            await asyncio.sleep(3600)
        return [f"ok {value}"]

    def timeout(self, value: int) -> list[str]:
        return [f"timed out {value}"]


class FailsTwiceThenAnswers(AsyncFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.attempts: dict[int, int] = {}

    async def async_invoke(self, value: int) -> list[str]:
        self.attempts[value] = self.attempts.get(value, 0) + 1
        if self.attempts[value] < 3:
            raise ConnectionError(f"lookup of {value} refused")
        return [f"{value} after {self.attempts[value]}"]


class EmptyFirst(AsyncFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.attempts: dict[int, int] = {}

    async def async_invoke(self, value: int) -> list[str]:
        self.attempts[value] = self.attempts.get(value, 0) + 1
        return [] if self.attempts[value] == 1 else [f"{value} after {self.attempts[value]}"]


class Identity(AsyncFunction):
    async def async_invoke(self, value: Any) -> list[Any]:
        await asyncio.sleep(0)
        return [value]


class Millis(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value * 10)


def _sink(ds: DataStream, out: Path) -> None:
    ds.sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())


def test_async_waits_on_a_real_cluster(tmp_path: Path, embedded: EmbeddedExecutor) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    numbers = env.from_collection(list(range(N)), type_info=Types.INT())
    five = Time.seconds(60)
    text = Types.STRING()
    _sink(AsyncDataStream.ordered_wait(numbers, ZeroWaitsForFive(), five, 10, text), tmp_path / "ordered")
    _sink(AsyncDataStream.unordered_wait(numbers, ZeroWaitsForFive(), five, 10, text), tmp_path / "unordered")
    counted = AsyncDataStream.unordered_wait(numbers, CountInFlight(), five, CAPACITY, text)
    _sink(counted, tmp_path / "capacity")
    _sink(
        AsyncDataStream.ordered_wait(numbers, OddOnesHang(), Time.milliseconds(300), output_type=text),
        tmp_path / "timeouts",
    )
    retry_errors = AsyncRetryStrategy.fixed_delay(
        5,
        10,
        None,
        functools.partial(
            async_retry_predicates.exception_type_predicate, expected_error_type=ConnectionError
        ),
    )
    retried = AsyncDataStream.unordered_wait_with_retry(
        numbers, FailsTwiceThenAnswers(), five, retry_errors, 10, text
    )
    _sink(retried, tmp_path / "retried")
    retry_empty = AsyncRetryStrategy.exponential_backoff(
        3, 5, 50, 2.0, async_retry_predicates.empty_result_predicate, None
    )
    _sink(
        AsyncDataStream.ordered_wait_with_retry(numbers, EmptyFirst(), five, retry_empty, output_type=text),
        tmp_path / "retried_empty",
    )
    # Event time through the operator: outputs keep their input's timestamp, so windows count right.
    timed = numbers.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Millis())
    )
    windowed = (
        AsyncDataStream.unordered_wait(timed, Identity(), five, 7)
        .key_by(lambda v: 0)
        .window(TumblingEventTimeWindows.of(Time.milliseconds(100)))
        .reduce(lambda a, b: a + b)
        .map(lambda v: str(v), output_type=text)
    )
    _sink(windowed, tmp_path / "windows")
    env.execute("async io")

    ordered = read_output_lines(tmp_path / "ordered")
    assert ordered == [str(i) for i in range(N)], "ordered_wait emits in input order"

    unordered = read_output_lines(tmp_path / "unordered")
    assert sorted(map(int, unordered)) == list(range(N)), "every record exactly once"
    assert unordered.index("5") < unordered.index("0"), "unordered_wait lets completed records overtake"

    seen = [int(line.split(",")[1]) for line in read_output_lines(tmp_path / "capacity")]
    assert len(seen) == N
    assert max(seen) == CAPACITY, f"at most {CAPACITY} lookups in flight, and that many were: {max(seen)}"

    expected_timeouts = [f"timed out {i}" if i % 2 else f"ok {i}" for i in range(N)]
    assert read_output_lines(tmp_path / "timeouts") == expected_timeouts

    assert sorted(read_output_lines(tmp_path / "retried")) == sorted(f"{i} after 3" for i in range(N))
    assert read_output_lines(tmp_path / "retried_empty") == [f"{i} after 2" for i in range(N)]

    window_sums = [int(line) for line in read_output_lines(tmp_path / "windows")]
    assert window_sums == [sum(range(i, min(i + 10, N))) for i in range(0, N, 10)]


class NeverAnswers(AsyncFunction):
    async def async_invoke(self, value: int) -> list[int]:
        await asyncio.sleep(3600)
        return [value]


class Broken(AsyncFunction):
    async def async_invoke(self, value: int) -> list[int]:
        if value == 3:
            raise ValueError("no such customer: 3")
        return [value]


def _failing_job(function: AsyncFunction, timeout: Time, out: Path, strategy: Any = None) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.set_restart_strategy(RestartStrategies.no_restart())
    numbers = env.from_collection(list(range(10)), type_info=Types.INT())
    if strategy is None:
        result = AsyncDataStream.ordered_wait(numbers, function, timeout, output_type=Types.INT())
    else:
        result = AsyncDataStream.ordered_wait_with_retry(
            numbers, function, timeout, strategy, output_type=Types.INT()
        )
    _sink(result.map(lambda v: str(v), output_type=Types.STRING()), out)
    env.execute("failing async io")


def _failure_text(error: BaseException) -> str:
    parts = []
    while error is not None:
        parts.append(str(error))
        parts.append(getattr(error, "traceback", "") or "")
        error = error.__cause__  # type: ignore[assignment]
    return "\n".join(parts)


def test_the_default_timeout_fails_the_job_naming_the_input(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    with pytest.raises(JobExecutionError) as failure:
        _failing_job(NeverAnswers(), Time.milliseconds(200), tmp_path / "out")
    text = _failure_text(failure.value)
    assert "TimeoutError" in text
    assert "Async function call has timed out for input: 0" in text


def test_an_exception_in_async_invoke_fails_the_job_after_the_retries(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    strategy = AsyncRetryStrategy.fixed_delay(2, 10, None, async_retry_predicates.has_exception_predicate)
    with pytest.raises(JobExecutionError) as failure:
        _failing_job(Broken(), Time.seconds(30), tmp_path / "out", strategy)
    text = _failure_text(failure.value)
    assert "ValueError" in text and "no such customer: 3" in text
    assert "during handling input '3'" in text
    assert "async_invoke" in text, "the user's frame is in the traceback"


class FailsInFirstAttempt(AsyncFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.attempt = runtime_context.get_attempt_number()

    async def async_invoke(self, value: int) -> list[str]:
        if self.attempt == 0 and value == 5:
            raise ConnectionError("service unavailable")
        return [f"{value} in attempt {self.attempt}"]


def test_a_failing_lookup_restarts_the_job_per_its_restart_strategy(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(2, 100))
    numbers = env.from_collection(list(range(10)), type_info=Types.INT())
    result = AsyncDataStream.ordered_wait(numbers, FailsInFirstAttempt(), Time.seconds(30), 4, Types.STRING())
    _sink(result, tmp_path / "out")
    env.execute("restarted async io")
    assert [line for line in read_output_lines(tmp_path / "out") if "attempt 1" in line] == [
        f"{i} in attempt 1" for i in range(10)
    ]
