"""User function interfaces (PyFlink's ``pyflink.datastream.functions``).

A DataStream call records the user's function as given (a Function subclass
instance, a plain function or a lambda); the runtime unpickles it on a
TaskExecutor, calls ``open(runtime_context)`` once per subtask, then the
per-record method, then ``close()``. The Context classes are interfaces the
runtime implements; they are here so user code can subclass and annotate
against the same names as in PyFlink.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from enum import Enum
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from flott.datastream.state import (
    BroadcastState,
    KeyedStateStore,
    MapStateDescriptor,
    ReadOnlyBroadcastState,
)
from flott.datastream.time_domain import TimeDomain
from flott.datastream.timerservice import TimerService

if TYPE_CHECKING:
    from flott.datastream.output_tag import OutputTag

IN = TypeVar("IN")
IN1 = TypeVar("IN1")
IN2 = TypeVar("IN2")
OUT = TypeVar("OUT")
KEY = TypeVar("KEY")
W = TypeVar("W")
W2 = TypeVar("W2")  # a nested Context's own window parameter, as in PyFlink

__all__ = [
    "AggregateFunction",
    "AllWindowFunction",
    "AsyncFunction",
    "AsyncFunctionDescriptor",
    "AsyncRetryPredicate",
    "AsyncRetryStrategy",
    "BaseBroadcastProcessFunction",
    "BroadcastProcessFunction",
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "FilterFunction",
    "FlatMapFunction",
    "Function",
    "KeySelector",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "MapFunction",
    "Partitioner",
    "ProcessAllWindowFunction",
    "ProcessFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "RuntimeContext",
    "TimerService",
    "WindowFunction",
]


class RuntimeContext(KeyedStateStore):
    """What a running function knows about its subtask; implemented by the runtime.

    Keyed state getters (inherited from KeyedStateStore) only work in functions
    applied to a KeyedStream.
    """

    @abstractmethod
    def get_task_name(self) -> str: ...

    @abstractmethod
    def get_number_of_parallel_subtasks(self) -> int: ...

    @abstractmethod
    def get_max_number_of_parallel_subtasks(self) -> int: ...

    @abstractmethod
    def get_index_of_this_subtask(self) -> int: ...

    @abstractmethod
    def get_attempt_number(self) -> int: ...

    @abstractmethod
    def get_task_name_with_subtasks(self) -> str: ...

    @abstractmethod
    def get_job_parameter(self, key: str, default_value: str) -> str: ...

    @abstractmethod
    def get_metrics_group(self) -> Any: ...


class Function(ABC):  # noqa: B024 - PyFlink's Function has only optional hooks
    """Base of all user functions: optional ``open``/``close`` lifecycle hooks."""

    def open(self, runtime_context: RuntimeContext) -> None:  # noqa: B027 - optional hook
        """Called once per subtask before the first record."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Called once per subtask after the last record (also on cancellation)."""


class MapFunction(Function):
    @abstractmethod
    def map(self, value: Any) -> Any: ...


class FlatMapFunction(Function):
    """``flat_map`` returns (or yields) an iterable of output records."""

    @abstractmethod
    def flat_map(self, value: Any) -> Iterable[Any] | None: ...


class FilterFunction(Function):
    @abstractmethod
    def filter(self, value: Any) -> bool: ...


class ReduceFunction(Function):
    @abstractmethod
    def reduce(self, value1: Any, value2: Any) -> Any: ...


class KeySelector(Function):
    """Extracts the key of a record; must be deterministic (it decides the key group)."""

    @abstractmethod
    def get_key(self, value: Any) -> Any: ...


class Partitioner(Function):
    @abstractmethod
    def partition(self, key: Any, num_partitions: int) -> int: ...


class AggregateFunction(Function):
    @abstractmethod
    def create_accumulator(self) -> Any: ...

    @abstractmethod
    def add(self, value: Any, accumulator: Any) -> Any: ...

    @abstractmethod
    def get_result(self, accumulator: Any) -> Any: ...

    def merge(self, acc_a: Any, acc_b: Any) -> Any:
        """Only merging (session) windows call this."""
        raise NotImplementedError(f"{type(self).__name__}.merge is not implemented")


# --------------------------------------------------------------------------- process functions


class ProcessFunction(Function):
    """``process_element`` yields output records; yielding ``(output_tag, value)`` emits a side output."""

    class Context(ABC):
        @abstractmethod
        def timer_service(self) -> TimerService: ...

        @abstractmethod
        def timestamp(self) -> int | None: ...

    @abstractmethod
    def process_element(self, value: Any, ctx: ProcessFunction.Context) -> Iterable[Any] | None: ...


class KeyedProcessFunction(Function):
    """A ProcessFunction on a KeyedStream: keyed state, the current key and timers."""

    class Context(ABC):
        @abstractmethod
        def get_current_key(self) -> Any: ...

        @abstractmethod
        def timer_service(self) -> TimerService: ...

        @abstractmethod
        def timestamp(self) -> int | None: ...

    class OnTimerContext(Context):
        @abstractmethod
        def time_domain(self) -> TimeDomain: ...

    @abstractmethod
    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterable[Any] | None: ...

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterable[Any] | None:
        """Called when a registered timer fires; yields output records."""
        return None


class CoMapFunction(Function):
    @abstractmethod
    def map1(self, value: Any) -> Any: ...

    @abstractmethod
    def map2(self, value: Any) -> Any: ...


class CoFlatMapFunction(Function):
    @abstractmethod
    def flat_map1(self, value: Any) -> Iterable[Any] | None: ...

    @abstractmethod
    def flat_map2(self, value: Any) -> Iterable[Any] | None: ...


class CoProcessFunction(Function):
    class Context(ABC):
        @abstractmethod
        def timer_service(self) -> TimerService: ...

        @abstractmethod
        def timestamp(self) -> int | None: ...

    @abstractmethod
    def process_element1(self, value: Any, ctx: CoProcessFunction.Context) -> Iterable[Any] | None: ...

    @abstractmethod
    def process_element2(self, value: Any, ctx: CoProcessFunction.Context) -> Iterable[Any] | None: ...


class KeyedCoProcessFunction(Function):
    class Context(ABC):
        @abstractmethod
        def get_current_key(self) -> Any: ...

        @abstractmethod
        def timer_service(self) -> TimerService: ...

        @abstractmethod
        def timestamp(self) -> int | None: ...

    class OnTimerContext(Context):
        @abstractmethod
        def time_domain(self) -> TimeDomain: ...

    @abstractmethod
    def process_element1(self, value: Any, ctx: KeyedCoProcessFunction.Context) -> Iterable[Any] | None: ...

    @abstractmethod
    def process_element2(self, value: Any, ctx: KeyedCoProcessFunction.Context) -> Iterable[Any] | None: ...

    def on_timer(self, timestamp: int, ctx: KeyedCoProcessFunction.OnTimerContext) -> Iterable[Any] | None:
        return None


# --------------------------------------------------------------------------- window functions


class WindowFunction(Function, Generic[IN, OUT, KEY, W]):
    @abstractmethod
    def apply(self, key: KEY, window: W, inputs: Iterable[IN]) -> Iterable[OUT]: ...


class AllWindowFunction(Function, Generic[IN, OUT, W]):
    @abstractmethod
    def apply(self, window: W, inputs: Iterable[IN]) -> Iterable[OUT]: ...


class ProcessWindowFunction(Function, Generic[IN, OUT, KEY, W]):
    class Context(ABC, Generic[W2]):
        @abstractmethod
        def window(self) -> W2: ...

        @abstractmethod
        def current_processing_time(self) -> int: ...

        @abstractmethod
        def current_watermark(self) -> int: ...

        @abstractmethod
        def window_state(self) -> KeyedStateStore: ...

        @abstractmethod
        def global_state(self) -> KeyedStateStore: ...

    @abstractmethod
    def process(self, key: KEY, context: Any, elements: Iterable[IN]) -> Iterable[OUT]: ...

    def clear(self, context: Any) -> None:
        """Called when the window is purged; clear per-window state here."""


class ProcessAllWindowFunction(Function, Generic[IN, OUT, W]):
    class Context(ABC, Generic[W2]):
        @abstractmethod
        def window(self) -> W2: ...

        @abstractmethod
        def window_state(self) -> KeyedStateStore: ...

        @abstractmethod
        def global_state(self) -> KeyedStateStore: ...

    @abstractmethod
    def process(self, context: Any, elements: Iterable[IN]) -> Iterable[OUT]: ...

    def clear(self, context: Any) -> None:
        """Called when the window is purged."""


# --------------------------------------------------------------------------- broadcast functions


class BaseBroadcastProcessFunction(Function):
    class BaseContext(ABC):
        @abstractmethod
        def timestamp(self) -> int | None: ...

        @abstractmethod
        def current_processing_time(self) -> int: ...

        @abstractmethod
        def current_watermark(self) -> int: ...

    class Context(BaseContext):
        @abstractmethod
        def get_broadcast_state(self, state_descriptor: MapStateDescriptor) -> BroadcastState: ...

    class ReadOnlyContext(BaseContext):
        @abstractmethod
        def get_broadcast_state(self, state_descriptor: MapStateDescriptor) -> ReadOnlyBroadcastState: ...


class BroadcastProcessFunction(BaseBroadcastProcessFunction, Generic[IN1, IN2, OUT]):
    class Context(BaseBroadcastProcessFunction.Context):
        """Context of ``process_broadcast_element``."""

    class ReadOnlyContext(BaseBroadcastProcessFunction.ReadOnlyContext):
        """Context of ``process_element``."""

    @abstractmethod
    def process_element(self, value: IN1, ctx: BroadcastProcessFunction.ReadOnlyContext) -> Any: ...

    @abstractmethod
    def process_broadcast_element(self, value: IN2, ctx: BroadcastProcessFunction.Context) -> Any: ...


class KeyedBroadcastProcessFunction(BaseBroadcastProcessFunction, Generic[KEY, IN1, IN2, OUT]):
    class Context(BaseBroadcastProcessFunction.Context):
        """Context of ``process_broadcast_element``."""

    class ReadOnlyContext(BaseBroadcastProcessFunction.ReadOnlyContext):
        @abstractmethod
        def timer_service(self) -> TimerService: ...

        @abstractmethod
        def get_current_key(self) -> Any: ...

    class OnTimerContext(ReadOnlyContext):
        @abstractmethod
        def time_domain(self) -> TimeDomain: ...

    @abstractmethod
    def process_element(self, value: IN1, ctx: KeyedBroadcastProcessFunction.ReadOnlyContext) -> Any: ...

    @abstractmethod
    def process_broadcast_element(self, value: IN2, ctx: KeyedBroadcastProcessFunction.Context) -> Any: ...

    def on_timer(self, timestamp: int, ctx: KeyedBroadcastProcessFunction.OnTimerContext) -> Any:
        return None


# --------------------------------------------------------------------------- async I/O


class AsyncFunction(Function, Generic[IN, OUT]):
    """A lookup (or any I/O) per record, as a coroutine (``AsyncDataStream.*_wait``).

    ``async_invoke`` runs on an asyncio loop the operator owns, with up to
    ``capacity`` records in flight per subtask; it returns the record's outputs
    as a list. Raising fails the job (and restarts it per the restart strategy).
    ``timeout`` is called on the task's thread when a record took longer than the
    operator's timeout; by default it fails the job with a TimeoutError.
    """

    @abstractmethod
    async def async_invoke(self, value: IN) -> list[OUT]: ...

    def timeout(self, value: IN) -> list[OUT]:
        raise TimeoutError("Async function call has timed out for input: " + str(value))


class AsyncFunctionDescriptor:
    """How an AsyncFunction is applied: what the async wait operator runs (plain data, pickled once)."""

    class OutputMode(Enum):
        ORDERED = 0
        UNORDERED = 1

    def __init__(
        self,
        async_function: AsyncFunction,
        timeout: Any,
        capacity: int,
        async_retry_strategy: AsyncRetryStrategy,
        output_mode: AsyncFunctionDescriptor.OutputMode,
    ) -> None:
        self.async_function = async_function
        self.timeout = timeout
        self.capacity = capacity
        self.async_retry_strategy = async_retry_strategy
        self.output_mode = output_mode


class AsyncRetryPredicate(ABC, Generic[OUT]):
    """Which outcomes of ``async_invoke`` are retried (None: that kind of outcome never is)."""

    @abstractmethod
    def result_predicate(self) -> Callable[[list[OUT]], bool] | None: ...

    @abstractmethod
    def exception_predicate(self) -> Callable[[Exception], bool] | None: ...


class AsyncRetryStrategy(ABC, Generic[OUT]):
    """When and how often an element's ``async_invoke`` is attempted again.

    The factories build the strategies of ``flott.datastream.async_retry_strategies``.
    """

    @abstractmethod
    def can_retry(self, current_attempts: int) -> bool: ...

    @abstractmethod
    def get_backoff_time_millis(self, current_attempts: int) -> int: ...

    @abstractmethod
    def get_retry_predicate(self) -> AsyncRetryPredicate[OUT]: ...

    @staticmethod
    def no_restart() -> AsyncRetryStrategy:
        from flott.datastream import async_retry_strategies

        return async_retry_strategies.NO_RETRY_STRATEGY

    @staticmethod
    def fixed_delay(
        max_attempts: int,
        backoff_time_millis: int,
        result_predicate: Callable[[list[OUT]], bool] | None,
        exception_predicate: Callable[[Exception], bool] | None,
    ) -> AsyncRetryStrategy:
        from flott.datastream.async_retry_strategies import FixedDelayRetryStrategy

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
        from flott.datastream.async_retry_strategies import ExponentialBackoffDelayRetryStrategy

        return ExponentialBackoffDelayRetryStrategy(
            max_attempts, initial_delay, max_retry_delay, multiplier, result_predicate, exception_predicate
        )


# --------------------------------------------------------------------------- helpers for the API layer


def describe_function(func: Any) -> str:
    """A short human name of a user function, for error messages."""
    name = getattr(func, "__qualname__", None) or type(func).__qualname__
    return str(name)


def side_output_of(value: Any) -> tuple[OutputTag, Any] | None:
    """``(tag, value)`` if a process function yielded a side output, else None.

    PyFlink process functions emit side outputs by yielding ``(output_tag, value)``;
    the runtime routes such records to the consumers of ``get_side_output(output_tag)``.
    """
    from flott.datastream.output_tag import OutputTag

    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], OutputTag):
        return value[0], value[1]
    return None


# SourceFunction / SinkFunction live with the connectors (they are adapters onto the
# Source/Sink contract); they are re-exported here lazily because PyFlink programs import
# them from ``pyflink.datastream.functions`` and the connectors package may import this one.
_CONNECTOR_REEXPORTS = {
    "SourceFunction": ("flott.datastream.connectors.source_function", "SourceFunction"),
    "SinkFunction": ("flott.datastream.connectors.source_function", "SinkFunction"),
}


def __getattr__(name: str) -> Any:
    if name in _CONNECTOR_REEXPORTS:
        module_name, attr = _CONNECTOR_REEXPORTS[name]
        try:
            module = importlib.import_module(module_name)
        except ImportError as e:
            raise AttributeError(f"{name} is not available: {e}") from None
        return getattr(module, attr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
