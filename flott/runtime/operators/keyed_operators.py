"""Keyed operators: reduce and its built-in aggregations, and keyed process.

Both own a :class:`HeapKeyedStateBackend`. Per record they compute the key,
make it the backend's current key (so user state reads see that key) and call
the user function. The keyed reduce keeps its running value in a state table
of the backend (``key -> value``), indexing that dict directly: that is one
dict operation per record and the value still ends up in snapshots.

STREAMING mode emits every updated value, like PyFlink; BATCH mode emits the
final value per key at end of input, like Flink's batch execution.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flott.datastream.functions import KeyedProcessFunction
from flott.runtime.operators.aggregation import create_aggregator
from flott.runtime.operators.stateless_operators import timers_not_supported, without_side_outputs
from flott.runtime.operators.stream_operator import (
    OperatorSetup,
    StreamOperator,
    close_user_function,
    open_user_function,
    user_method,
)
from flott.runtime.partitioner.key_group_stream_partitioner import unhashable_key_error
from flott.runtime.state.heap import HeapKeyedStateBackend

REDUCE_STATE_NAME = "_op_state"
"""State name of the keyed reduce's running value (Flink uses the same name)."""

AGGREGATION_KINDS = ("sum", "min", "max", "min_by", "max_by")


def _rethrow_unhashable(key: Any, error: TypeError) -> None:
    """Turn 'unhashable type' from a state dict into an error that names the key selector."""
    try:
        hash(key)
    except TypeError:
        raise unhashable_key_error(key, error) from None


class StreamGroupedReduceOperator(StreamOperator):
    """``reduce`` on a keyed stream, and ``sum``/``min``/``max``/``min_by``/``max_by`` (config ``field``)."""

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._setup = setup
        self._streaming = setup.streaming
        self._key_object, self._key = setup.key_selector()
        if setup.descriptor.kind in AGGREGATION_KINDS:
            field = setup.descriptor.config.get("field", 0)
            self._function: Any = create_aggregator(setup.descriptor.kind, field)
        else:
            self._function = setup.load_function(setup.descriptor.function, "reduce function")
        self._reduce: Callable[[Any, Any], Any] = user_method(
            self._function, "reduce", f"reduce '{self.name}'"
        )
        self.backend: HeapKeyedStateBackend = setup.keyed_state_backend()
        self._values = self.backend.state_table(REDUCE_STATE_NAME)

    def open(self) -> None:
        ctx = self._setup.runtime_context(self.backend)
        open_user_function(self._key_object, ctx)
        open_user_function(self._function, ctx)

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        key_of = self._key
        reduce = self._reduce
        values = self._values
        backend = self.backend
        key: Any = None
        try:
            if self._streaming:
                out: list[Any] = []
                emit = out.append
                for value in batch:
                    key = key_of(value)
                    backend.current_key = key
                    if key in values:
                        value = reduce(values[key], value)
                    values[key] = value
                    emit(value)
                return out
            for value in batch:
                key = key_of(value)
                backend.current_key = key
                if key in values:
                    value = reduce(values[key], value)
                values[key] = value
            return []
        except TypeError as e:
            _rethrow_unhashable(key, e)
            raise

    def end_input(self) -> list[Any]:
        if self._streaming:
            return []
        return list(self._values.values())

    def close(self) -> None:
        try:
            close_user_function(self._function)
            close_user_function(self._key_object)
        finally:
            self.backend.dispose()


class KeyedProcessContext(KeyedProcessFunction.Context):
    """``KeyedProcessFunction.Context``: the current key, timestamp (none yet) and timer service."""

    def __init__(self, backend: HeapKeyedStateBackend) -> None:
        self._backend = backend

    def get_current_key(self) -> Any:
        return self._backend.current_key

    def timestamp(self) -> int | None:
        return None

    def timer_service(self) -> Any:
        raise timers_not_supported()


class KeyedProcessOperator(StreamOperator):
    """``process`` on a keyed stream with a KeyedProcessFunction; ``process_element`` yields outputs."""

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._setup = setup
        self._key_object, self._key = setup.key_selector()
        self._function = setup.load_function(setup.descriptor.function, "KeyedProcessFunction")
        self._process_element = user_method(self._function, "process_element", f"keyed process '{self.name}'")
        self.backend: HeapKeyedStateBackend = setup.keyed_state_backend()
        self._ctx = KeyedProcessContext(self.backend)

    def open(self) -> None:
        ctx = self._setup.runtime_context(self.backend)
        open_user_function(self._key_object, ctx)
        open_user_function(self._function, ctx)

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        out: list[Any] = []
        extend = out.extend
        key_of = self._key
        process_element = self._process_element
        ctx = self._ctx
        backend = self.backend
        for value in batch:
            backend.current_key = key_of(value)
            produced = process_element(value, ctx)
            if produced is not None:
                extend(produced)
        return without_side_outputs(out)

    def close(self) -> None:
        try:
            close_user_function(self._function)
            close_user_function(self._key_object)
        finally:
            self.backend.dispose()
