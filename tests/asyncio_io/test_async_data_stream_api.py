"""AsyncDataStream at plan time: PyFlink's checks and messages, and what the operator records."""

from __future__ import annotations

import pytest

from flott.api.streaming.transformations import OneInputTransformation
from flott.common import Types
from flott.common.time import Duration, Time
from flott.datastream import AsyncDataStream, AsyncFunction, AsyncRetryStrategy, StreamExecutionEnvironment
from flott.datastream import async_retry_strategies as strategies
from flott.datastream.data_stream import DataStream
from flott.datastream.functions import AsyncFunctionDescriptor


class Lookup(AsyncFunction):
    async def async_invoke(self, value: int) -> list[int]:
        return [value]


class NotAsync:
    def async_invoke(self, value: int) -> list[int]:
        return [value]


def numbers() -> DataStream:
    env = StreamExecutionEnvironment.get_execution_environment()
    return env.from_collection([1, 2, 3], type_info=Types.INT())


def test_ordered_wait_records_an_async_wait_operator_with_pyflinks_defaults() -> None:
    out = AsyncDataStream.ordered_wait(numbers(), Lookup(), Time.seconds(3), output_type=Types.LONG())
    t = out.transformation
    assert isinstance(t, OneInputTransformation)
    assert (t.kind, t.name, t.output_type) == ("async_wait", "async wait operator", Types.LONG())
    d = t.function
    assert isinstance(d, AsyncFunctionDescriptor)
    assert d.capacity == 100 and d.timeout.to_milliseconds() == 3000
    assert d.output_mode is AsyncFunctionDescriptor.OutputMode.ORDERED
    assert d.async_retry_strategy is strategies.NO_RETRY_STRATEGY


def test_unordered_wait_with_retry_keeps_the_strategy_and_accepts_a_duration() -> None:
    strategy = AsyncRetryStrategy.fixed_delay(2, 100, None, lambda e: True)
    out = AsyncDataStream.unordered_wait_with_retry(
        numbers(), Lookup(), Duration.of_millis(500), strategy, capacity=7
    )
    d = out.transformation.function
    assert d.output_mode is AsyncFunctionDescriptor.OutputMode.UNORDERED
    assert (d.capacity, d.timeout.to_milliseconds(), d.async_retry_strategy) == (7, 500, strategy)


def test_async_invoke_must_be_a_coroutine_function() -> None:
    with pytest.raises(TypeError, match="should be declared as 'async def'"):
        AsyncDataStream.ordered_wait(numbers(), NotAsync(), Time.seconds(1))  # type: ignore[arg-type]


def test_retries_need_a_timeout_and_a_strategy() -> None:
    strategy = AsyncRetryStrategy.fixed_delay(2, 100, None, None)
    with pytest.raises(ValueError, match="Timeout should be configured when do async with retry"):
        AsyncDataStream.ordered_wait_with_retry(numbers(), Lookup(), Time.milliseconds(0), strategy)
    with pytest.raises(ValueError, match="Async retry strategy should not be None"):
        AsyncDataStream.unordered_wait_with_retry(numbers(), Lookup(), Time.seconds(1), None)  # type: ignore[arg-type]


def test_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError, match="capacity"):
        AsyncDataStream.unordered_wait(numbers(), Lookup(), Time.seconds(1), capacity=0)


def test_retry_strategies_count_attempts_as_pyflink() -> None:
    fixed = AsyncRetryStrategy.fixed_delay(3, 40, None, None)
    assert [fixed.can_retry(n) for n in (1, 3, 4)] == [True, True, False]
    assert fixed.get_backoff_time_millis(2) == 40
    backoff = AsyncRetryStrategy.exponential_backoff(5, 10, 50, 2.0, None, None)
    assert [backoff.get_backoff_time_millis(n) for n in (1, 2, 3, 4, 5)] == [10, 20, 40, 50, 50]
    none = AsyncRetryStrategy.no_restart()
    assert none is strategies.NO_RETRY_STRATEGY and not none.can_retry(1)
    predicate = none.get_retry_predicate()
    assert predicate.result_predicate() is None and predicate.exception_predicate() is None
    with pytest.raises(ValueError, match="max_attempts"):
        AsyncRetryStrategy.fixed_delay(0, 10, None, None)


def test_the_default_timeout_raises_pyflinks_timeout_error() -> None:
    with pytest.raises(TimeoutError, match="Async function call has timed out for input: 42"):
        Lookup().timeout(42)
