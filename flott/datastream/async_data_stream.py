"""AsyncDataStream (PyFlink's async I/O entry point): an AsyncFunction applied to a DataStream.

Each call adds an ``async wait operator`` (kind ``async_wait``, run by
:mod:`flott.runtime.operators.async_wait_operator`) with up to ``capacity``
records in flight per subtask. ``ordered_wait`` emits results in input order,
``unordered_wait`` as they complete (never across a watermark). ``timeout`` is
per record, over all its attempts; 0 means none (only without retries, as in
PyFlink). The checks and their messages are PyFlink's.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from flott.api.streaming.async_retry import AsyncRetryStrategy
from flott.api.streaming.functions import AsyncFunction, AsyncFunctionDescriptor
from flott.common.time import Duration, Time
from flott.datastream import async_retry_strategies

if TYPE_CHECKING:
    from flott.datastream.data_stream import DataStream

_NAME = "async wait operator"


class AsyncDataStream:
    """A helper class to apply :class:`~flott.datastream.functions.AsyncFunction` to a data stream."""

    @staticmethod
    def unordered_wait(
        data_stream: DataStream,
        async_function: AsyncFunction,
        timeout: Time,
        capacity: int = 100,
        output_type: Any = None,
    ) -> DataStream:
        """Results leave as they complete (within the watermarks around them)."""
        return AsyncDataStream.unordered_wait_with_retry(
            data_stream,
            async_function,
            timeout,
            async_retry_strategies.NO_RETRY_STRATEGY,
            capacity,
            output_type,
        )

    @staticmethod
    def unordered_wait_with_retry(
        data_stream: DataStream,
        async_function: AsyncFunction,
        timeout: Time,
        async_retry_strategy: AsyncRetryStrategy,
        capacity: int = 100,
        output_type: Any = None,
    ) -> DataStream:
        """As :meth:`unordered_wait`, retrying per ``async_retry_strategy``."""
        return AsyncDataStream._apply(
            data_stream,
            async_function,
            timeout,
            async_retry_strategy,
            capacity,
            output_type,
            AsyncFunctionDescriptor.OutputMode.UNORDERED,
        )

    @staticmethod
    def ordered_wait(
        data_stream: DataStream,
        async_function: AsyncFunction,
        timeout: Time,
        capacity: int = 100,
        output_type: Any = None,
    ) -> DataStream:
        """Results leave in the order of the input records."""
        return AsyncDataStream.ordered_wait_with_retry(
            data_stream,
            async_function,
            timeout,
            async_retry_strategies.NO_RETRY_STRATEGY,
            capacity,
            output_type,
        )

    @staticmethod
    def ordered_wait_with_retry(
        data_stream: DataStream,
        async_function: AsyncFunction,
        timeout: Time,
        async_retry_strategy: AsyncRetryStrategy,
        capacity: int = 100,
        output_type: Any = None,
    ) -> DataStream:
        """As :meth:`ordered_wait`, retrying per ``async_retry_strategy``."""
        return AsyncDataStream._apply(
            data_stream,
            async_function,
            timeout,
            async_retry_strategy,
            capacity,
            output_type,
            AsyncFunctionDescriptor.OutputMode.ORDERED,
        )

    @staticmethod
    def _apply(
        data_stream: DataStream,
        async_function: AsyncFunction,
        timeout: Any,
        async_retry_strategy: AsyncRetryStrategy,
        capacity: int,
        output_type: Any,
        mode: AsyncFunctionDescriptor.OutputMode,
    ) -> DataStream:
        from flott.datastream.data_stream import DataStream

        if not isinstance(data_stream, DataStream):
            raise TypeError("data_stream must be a DataStream")
        timeout = AsyncDataStream._validate(data_stream, async_function, timeout, async_retry_strategy)
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"The capacity of an async operator must be a positive int, got {capacity!r}.")
        descriptor = AsyncFunctionDescriptor(async_function, timeout, capacity, async_retry_strategy, mode)
        transformation = data_stream._one_input("async_wait", _NAME, descriptor, output_type)
        return DataStream(transformation, data_stream.get_execution_environment())

    @staticmethod
    def _validate(
        data_stream: DataStream, async_function: Any, timeout: Any, async_retry_strategy: Any
    ) -> Time:
        """PyFlink's checks, with its messages; returns the timeout as a Time."""
        if not inspect.iscoroutinefunction(getattr(async_function, "async_invoke", None)):
            raise TypeError(
                f"Method 'async_invoke' of class '{type(async_function)}' should be declared as 'async def'."
            )
        if isinstance(timeout, Duration):
            timeout = Time.milliseconds(timeout.to_millis())
        if not callable(getattr(timeout, "to_milliseconds", None)):
            raise TypeError(f"timeout must be a Time (e.g. Time.seconds(10)), got {type(timeout).__name__}")
        if async_retry_strategy is None:
            raise ValueError("Async retry strategy should not be None.")
        if (
            async_retry_strategy is not async_retry_strategies.NO_RETRY_STRATEGY
            and timeout.to_milliseconds() <= 0
        ):
            raise ValueError("Timeout should be configured when do async with retry.")
        if async_retry_strategy.get_retry_predicate() is None:
            raise ValueError(
                f"Retry predicate of the async retry strategy '{type(async_retry_strategy)}' is None."
            )
        return timeout  # type: ignore[no-any-return]
