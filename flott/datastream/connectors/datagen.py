"""``DataGeneratorSource``: records ``generator_function(index)`` for an index range, optionally rate-limited.

Shaped like Flink's Java ``DataGeneratorSource(generatorFunction, count,
rateLimiterStrategy, typeInfo)``: the index space ``[0, count)`` is split
across subtasks (each owns a contiguous slice), a rate given for the whole
source is divided evenly among the subtasks, and ``count=None`` (or
``sys.maxsize``, Java's ``Long.MAX_VALUE``) makes the source unbounded.

Checkpointing: a split is ``(next index, end index)`` (exclusive end), so a
restored reader continues with ``generator_function(next)``; the generator
function must therefore be deterministic in its index for exactly-once output.
"""

from __future__ import annotations

import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from flott.common.typeinfo import TypeInformation
from flott.datastream.connectors.base import Boundedness, CheckpointedSourceReader, Source
from flott.datastream.connectors.number_seq import _RangeSplitsReader, normalize_range_splits, split_range

__all__ = ["DataGeneratorSource", "GeneratorFunction", "RateLimiter", "RateLimiterStrategy"]

_MAX_WAIT_S = 0.05  # poll_batch may block this long at most (base contract)


class GeneratorFunction(ABC):
    """Maps an index (0, 1, 2, ...) to a record."""

    def open(self) -> None:  # noqa: B027 - optional hook
        """Called once on the TaskExecutor before the first ``map``."""

    @abstractmethod
    def map(self, value: int) -> Any: ...

    def close(self) -> None:  # noqa: B027 - optional hook
        """Called once when the reader closes."""


class RateLimiter:
    """Lets through ``rate`` records per second on average, with at most one second of burst.

    Per batch, not per record: :meth:`acquire` grants up to ``wanted`` permits and
    sleeps (bounded) only when none are available."""

    def __init__(self, records_per_second: float) -> None:
        if records_per_second <= 0:
            raise ValueError("records_per_second must be positive")
        self._rate = float(records_per_second)
        self._start = time.monotonic()
        self._granted = 0

    def acquire(self, wanted: int) -> int:
        now = time.monotonic()
        elapsed = now - self._start
        available = int(elapsed * self._rate) + 1 - self._granted
        burst = max(1, int(self._rate))
        if available > burst:
            # Idle time does not accumulate beyond one second's worth of records.
            self._start = now - (self._granted + burst - 1) / self._rate
            available = burst
        if available <= 0:
            wait = (self._granted - elapsed * self._rate) / self._rate
            time.sleep(min(max(wait, 0.0), _MAX_WAIT_S))
            return 0
        granted = min(wanted, available)
        self._granted += granted
        return granted


class RateLimiterStrategy:
    """Creates the rate limiter of one subtask (Flink's ``RateLimiterStrategy``)."""

    def __init__(self, records_per_second: float | None) -> None:
        self._records_per_second = records_per_second

    @staticmethod
    def per_second(records_per_second: float) -> RateLimiterStrategy:
        """At most ``records_per_second`` for the whole source; each of p subtasks gets 1/p."""
        if records_per_second <= 0:
            raise ValueError("records_per_second must be positive")
        return RateLimiterStrategy(float(records_per_second))

    @staticmethod
    def no_op() -> RateLimiterStrategy:
        return RateLimiterStrategy(None)

    def get_records_per_second(self) -> float | None:
        return self._records_per_second

    def create_rate_limiter(self, parallelism: int) -> RateLimiter | None:
        if self._records_per_second is None:
            return None
        return RateLimiter(self._records_per_second / parallelism)


class _GeneratorReader(_RangeSplitsReader):
    def __init__(
        self,
        fn: Callable[[int], Any],
        splits: list[tuple[int, int]],
        limiter: RateLimiter | None,
        on_close: Callable[[], None] | None,
    ) -> None:
        super().__init__(splits)
        self._fn = fn
        self._limiter = limiter
        self._on_close = on_close

    def poll_batch(self, max_records: int) -> list[Any] | None:
        cur = self._next
        remaining = self._hi - cur
        if remaining <= 0:
            if not self._advance():
                return None
            cur = self._next
            remaining = self._hi - cur
        n = min(max_records, remaining)
        if self._limiter is not None:
            n = self._limiter.acquire(n)
            if n == 0:
                return []
        self._next = cur + n
        fn = self._fn
        return [fn(i) for i in range(cur, cur + n)]

    def close(self) -> None:
        super().close()
        if self._on_close is not None:
            on_close, self._on_close = self._on_close, None
            on_close()


class DataGeneratorSource(Source):
    """``DataGeneratorSource(generator_function, count, [rate_limiter_strategy,] type_info)``.

    ``generator_function`` is a callable ``index -> record`` or a :class:`GeneratorFunction`.
    As in Java, the third positional argument may be the type info when no rate limit is wanted.
    """

    def __init__(
        self,
        generator_function: GeneratorFunction | Callable[[int], Any],
        count: int | None,
        rate_limiter_strategy: RateLimiterStrategy | TypeInformation | None = None,
        type_info: TypeInformation | None = None,
    ) -> None:
        if isinstance(rate_limiter_strategy, TypeInformation):
            if type_info is not None:
                raise TypeError("type_info given twice")
            rate_limiter_strategy, type_info = None, rate_limiter_strategy
        if count is not None and count < 0:
            raise ValueError("count must not be negative")
        if not (isinstance(generator_function, GeneratorFunction) or callable(generator_function)):
            raise TypeError("generator_function must be callable or a GeneratorFunction")
        self._generator = generator_function
        self._count = sys.maxsize if count is None else int(count)
        self._rate = rate_limiter_strategy or RateLimiterStrategy.no_op()
        self._type_info = type_info

    def get_count(self) -> int:
        return self._count

    def get_boundedness(self) -> Boundedness:
        if self._count >= sys.maxsize:
            return Boundedness.CONTINUOUS_UNBOUNDED
        return Boundedness.BOUNDED

    def get_produced_type(self) -> TypeInformation | None:
        return self._type_info

    def create_reader(self, subtask_index: int, parallelism: int) -> CheckpointedSourceReader:
        return self._reader([split_range(0, self._count, subtask_index, parallelism)], parallelism)

    def restore_reader(
        self, subtask_index: int, parallelism: int, splits: list[Any]
    ) -> CheckpointedSourceReader:
        """A reader of exactly ``splits`` (``(next index, end index)`` from ``snapshot_state``).

        The rate limit is divided by the new ``parallelism``, as for a fresh reader."""
        return self._reader(normalize_range_splits(splits), parallelism)

    def _reader(self, splits: list[tuple[int, int]], parallelism: int) -> _GeneratorReader:
        gen = self._generator
        limiter = self._rate.create_rate_limiter(parallelism)
        if isinstance(gen, GeneratorFunction):
            gen.open()
            return _GeneratorReader(gen.map, splits, limiter, gen.close)
        return _GeneratorReader(gen, splits, limiter, None)
