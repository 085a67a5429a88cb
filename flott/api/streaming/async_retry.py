"""Retry strategies for async I/O (Flink's ``streaming.api.functions.async.AsyncRetryStrategy``).

The contracts (``AsyncRetryStrategy``, ``AsyncRetryPredicate``) and the strategies their factories
build live together, so the factories need no import of their own; the user API re-exports them
under PyFlink's paths (``pyflink.datastream.functions`` and
``pyflink.datastream.async_retry_strategies``).

A strategy says whether attempt ``n`` may be followed by another (:meth:`can_retry`, attempts count
from 1) and how long to wait before it (:meth:`get_backoff_time_millis`); its predicates say which
outcomes are worth retrying. The async wait operator calls these for every element, on the thread
that runs the element's coroutines, exactly as PyFlink does, so a user-defined strategy behaves the
same on flott. Like PyFlink's, the exponential strategy remembers its last delay on the strategy
object (it is shared by the elements of one subtask).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = [
    "AsyncRetryPredicate",
    "AsyncRetryStrategy",
    "ExponentialBackoffDelayRetryStrategy",
    "FixedDelayRetryStrategy",
    "NoRetryStrategy",
    "RetryPredicate",
]

OUT = TypeVar("OUT")


class AsyncRetryPredicate(ABC, Generic[OUT]):
    """Which outcomes of ``async_invoke`` are retried (None: that kind of outcome never is)."""

    @abstractmethod
    def result_predicate(self) -> Callable[[list[OUT]], bool] | None: ...

    @abstractmethod
    def exception_predicate(self) -> Callable[[Exception], bool] | None: ...


class AsyncRetryStrategy(ABC, Generic[OUT]):
    """When and how often an element's ``async_invoke`` is attempted again.

    The factories build the strategies below.
    """

    @abstractmethod
    def can_retry(self, current_attempts: int) -> bool: ...

    @abstractmethod
    def get_backoff_time_millis(self, current_attempts: int) -> int: ...

    @abstractmethod
    def get_retry_predicate(self) -> AsyncRetryPredicate[OUT]: ...

    @staticmethod
    def no_restart() -> AsyncRetryStrategy:
        return NO_RETRY_STRATEGY

    @staticmethod
    def fixed_delay(
        max_attempts: int,
        backoff_time_millis: int,
        result_predicate: Callable[[list[OUT]], bool] | None,
        exception_predicate: Callable[[Exception], bool] | None,
    ) -> AsyncRetryStrategy:
        return FixedDelayRetryStrategy(
            max_attempts, backoff_time_millis, result_predicate, exception_predicate
        )

    @staticmethod
    def exponential_backoff(
        max_attempts: int,
        initial_delay: int,
        max_retry_delay: int,
        multiplier: float,
        result_predicate: Callable[[list[OUT]], bool] | None,
        exception_predicate: Callable[[Exception], bool] | None,
    ) -> AsyncRetryStrategy:
        return ExponentialBackoffDelayRetryStrategy(
            max_attempts, initial_delay, max_retry_delay, multiplier, result_predicate, exception_predicate
        )


class RetryPredicate(AsyncRetryPredicate[OUT], Generic[OUT]):
    def __init__(
        self,
        result_predicate: Callable[[list[OUT]], bool] | None,
        exception_predicate: Callable[[Exception], bool] | None,
    ) -> None:
        self._result_predicate = result_predicate
        self._exception_predicate = exception_predicate

    def result_predicate(self) -> Callable[[list[OUT]], bool] | None:
        return self._result_predicate

    def exception_predicate(self) -> Callable[[Exception], bool] | None:
        return self._exception_predicate


class NoRetryStrategy(AsyncRetryStrategy[OUT], Generic[OUT]):
    def can_retry(self, current_attempts: int) -> bool:
        return False

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        return -1

    def get_retry_predicate(self) -> AsyncRetryPredicate[OUT]:
        return RetryPredicate(None, None)


class FixedDelayRetryStrategy(AsyncRetryStrategy[OUT], Generic[OUT]):
    def __init__(
        self,
        max_attempts: int,
        backoff_time_millis: int,
        result_predicate: Callable[[list[OUT]], bool] | None,
        exception_predicate: Callable[[Exception], bool] | None,
    ) -> None:
        if max_attempts <= 0:
            raise ValueError("max_attempts should be greater than zero.")
        if backoff_time_millis <= 0:
            raise ValueError("backoff_time_millis should be greater than zero.")
        self._max_attempts = max_attempts
        self._backoff_time_millis = backoff_time_millis
        self._result_predicate = result_predicate
        self._exception_predicate = exception_predicate

    def can_retry(self, current_attempts: int) -> bool:
        return current_attempts <= self._max_attempts

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        return self._backoff_time_millis

    def get_retry_predicate(self) -> AsyncRetryPredicate[OUT]:
        return RetryPredicate(self._result_predicate, self._exception_predicate)


class ExponentialBackoffDelayRetryStrategy(AsyncRetryStrategy[OUT], Generic[OUT]):
    def __init__(
        self,
        max_attempts: int,
        initial_delay: int,
        max_retry_delay: int,
        multiplier: float,
        result_predicate: Callable[[list[OUT]], bool] | None,
        exception_predicate: Callable[[Exception], bool] | None,
    ) -> None:
        for name, value in (
            ("max_attempts", max_attempts),
            ("initial_delay", initial_delay),
            ("max_retry_delay", max_retry_delay),
            ("multiplier", multiplier),
        ):
            if value <= 0:
                raise ValueError(f"{name} should be greater than zero.")
        self._max_attempts = max_attempts
        self._max_retry_delay = max_retry_delay
        self._multiplier = multiplier
        self._result_predicate = result_predicate
        self._exception_predicate = exception_predicate
        self._initial_delay = initial_delay
        self._last_retry_delay = initial_delay

    def can_retry(self, current_attempts: int) -> bool:
        return current_attempts <= self._max_attempts

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        if current_attempts <= 1:
            self._last_retry_delay = self._initial_delay
            return self._last_retry_delay
        backoff = int(min(self._last_retry_delay * self._multiplier, self._max_retry_delay))
        self._last_retry_delay = backoff
        return backoff

    def get_retry_predicate(self) -> AsyncRetryPredicate[OUT]:
        return RetryPredicate(self._result_predicate, self._exception_predicate)


NO_RETRY_STRATEGY: AsyncRetryStrategy = NoRetryStrategy()
