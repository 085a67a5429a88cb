"""The function contracts every floor shares (Flink's ``org.apache.flink.api.common.functions``).

The user API (``flott.datastream.functions`` re-exports these under PyFlink's path), the graph
translation and the runtime operators all name these classes; they live here, below all of
them, so that neither has to import the other. A DataStream call records the user's function
as given (a Function subclass instance, a plain function or a lambda); the runtime unpickles it
on a TaskExecutor, calls ``open(runtime_context)`` once per subtask, then the per-record method,
then ``close()``. ``RuntimeContext`` is an interface the runtime implements.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from flott.api.common.state import KeyedStateStore

__all__ = [
    "AggregateFunction",
    "FilterFunction",
    "FlatMapFunction",
    "Function",
    "KeySelector",
    "MapFunction",
    "Partitioner",
    "ReduceFunction",
    "RuntimeContext",
    "describe_function",
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


def describe_function(func: Any) -> str:
    """A short human name of a user function, for error messages."""
    name = getattr(func, "__qualname__", None) or type(func).__qualname__
    return str(name)
