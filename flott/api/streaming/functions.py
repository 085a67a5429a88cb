"""The streaming function contracts (Flink's ``org.apache.flink.streaming.api.functions``).

Process, co-process, window, broadcast and async functions: what user code subclasses and what
the runtime's operators call. The Context classes are interfaces the runtime implements; they are
here, below both the user API (``flott.datastream.functions`` re-exports them under PyFlink's
path) and the operators, so that neither imports the other.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from enum import Enum
from typing import Any, Generic, TypeVar

from flott.api.common.functions import Function
from flott.api.common.state import (
    BroadcastState,
    KeyedStateStore,
    MapStateDescriptor,
    ReadOnlyBroadcastState,
)
from flott.api.streaming.async_retry import AsyncRetryStrategy
from flott.api.streaming.time_domain import TimeDomain
from flott.api.streaming.timer_service import TimerService

IN = TypeVar("IN")
IN1 = TypeVar("IN1")
IN2 = TypeVar("IN2")
OUT = TypeVar("OUT")
KEY = TypeVar("KEY")
W = TypeVar("W")
W2 = TypeVar("W2")  # a nested Context's own window parameter, as in PyFlink

__all__ = [
    "AllWindowFunction",
    "AsyncFunction",
    "AsyncFunctionDescriptor",
    "BaseBroadcastProcessFunction",
    "BroadcastProcessFunction",
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "ProcessAllWindowFunction",
    "ProcessFunction",
    "ProcessWindowFunction",
    "WindowFunction",
]


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
