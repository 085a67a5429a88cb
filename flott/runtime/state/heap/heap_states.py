"""Keyed state objects on the heap (Flink's HeapValueState, HeapListState, ...).

Each state object is a thin view: it reads the backend's *current key* and
indexes one table (the state's ``key -> value`` mapping) with it. On the heap
the table is a plain dict: nothing is copied or serialised on access, so a
state read costs a dict lookup, which is what a per-record ``state.value()``
can afford. The RocksDB backend uses these same classes over a store-backed
mapping with a write-back cache (``flott.runtime.state.rocksdb.store_table``),
so both backends have exactly these semantics.

The classes implement the user-facing abstract classes of
``flott.datastream.state``, so ``isinstance(state, ValueState)`` holds in user code.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, MutableMapping
from typing import TYPE_CHECKING, Any

from flott.api.common.state import AggregatingState, ListState, MapState, ReducingState, ValueState

if TYPE_CHECKING:
    from flott.runtime.state.heap.table_backend import TableKeyedStateBackend


class HeapValueState(ValueState):
    """``value()`` / ``update(v)`` / ``clear()`` for the current key."""

    def __init__(
        self, backend: TableKeyedStateBackend, table: MutableMapping[Any, Any], default: Any = None
    ) -> None:
        self._backend = backend
        self._table = table
        self._default = default

    def value(self) -> Any:
        v = self._table.get(self._backend.current_key, self)
        if v is self:
            # Absent: PyFlink returns None; a descriptor default is copied so users cannot mutate it.
            return None if self._default is None else copy.copy(self._default)
        return v

    def update(self, value: Any) -> None:
        """Set the value; ``None`` clears it (as Flink does for ``update(null)``)."""
        if value is None:
            self._table.pop(self._backend.current_key, None)
        else:
            self._table[self._backend.current_key] = value

    def clear(self) -> None:
        self._table.pop(self._backend.current_key, None)


class HeapListState(ListState):
    """A list per key. ``get()`` hands out a copy so the caller cannot change state by accident."""

    def __init__(self, backend: TableKeyedStateBackend, table: MutableMapping[Any, Any]) -> None:
        self._backend = backend
        self._table = table

    def get(self) -> list[Any]:
        values = self._table.get(self._backend.current_key)
        return [] if values is None else list(values)

    def add(self, value: Any) -> None:
        if value is None:
            raise ValueError("cannot add None to a ListState")
        key = self._backend.current_key
        values = self._table.get(key)
        if values is None:
            self._table[key] = [value]
        else:
            values.append(value)

    def add_all(self, values: Iterable[Any]) -> None:
        new = list(values)
        if any(v is None for v in new):
            raise ValueError("cannot add None to a ListState")
        if not new:
            return
        key = self._backend.current_key
        current = self._table.get(key)
        if current is None:
            self._table[key] = new
        else:
            current.extend(new)

    def update(self, values: Iterable[Any] | None) -> None:
        """Replace the list; ``None`` or an empty list clears the state (Flink's rule)."""
        new = [] if values is None else list(values)
        if any(v is None for v in new):
            raise ValueError("cannot add None to a ListState")
        if new:
            self._table[self._backend.current_key] = new
        else:
            self._table.pop(self._backend.current_key, None)

    def clear(self) -> None:
        self._table.pop(self._backend.current_key, None)


class HeapMapState(MapState):
    """A dict per key. Iteration methods return snapshots (lists), so state may change while iterating."""

    def __init__(self, backend: TableKeyedStateBackend, table: MutableMapping[Any, Any]) -> None:
        self._backend = backend
        self._table = table

    def _map(self) -> dict[Any, Any] | None:
        return self._table.get(self._backend.current_key)

    def _map_for_write(self) -> dict[Any, Any]:
        key = self._backend.current_key
        m = self._table.get(key)
        if m is None:
            m = self._table[key] = {}
        return m

    def _drop_if_empty(self, m: dict[Any, Any]) -> None:
        # An empty map is "no state": keep tables (and later snapshots) free of empty entries.
        if not m:
            self._table.pop(self._backend.current_key, None)

    def get(self, key: Any) -> Any:
        m = self._map()
        return None if m is None else m.get(key)

    def put(self, key: Any, value: Any) -> None:
        self._map_for_write()[key] = value

    def put_all(self, dict_value: dict[Any, Any]) -> None:
        if dict_value:
            self._map_for_write().update(dict_value)

    def remove(self, key: Any) -> None:
        m = self._map()
        if m is not None:
            m.pop(key, None)
            self._drop_if_empty(m)

    def contains(self, key: Any) -> bool:
        m = self._map()
        return m is not None and key in m

    def items(self) -> list[tuple[Any, Any]]:
        m = self._map()
        return [] if m is None else list(m.items())

    def keys(self) -> list[Any]:
        m = self._map()
        return [] if m is None else list(m)

    def values(self) -> list[Any]:
        m = self._map()
        return [] if m is None else list(m.values())

    def is_empty(self) -> bool:
        return not self._map()

    def clear(self) -> None:
        self._table.pop(self._backend.current_key, None)


class HeapReducingState(ReducingState):
    """Folds each added value into the current one with the descriptor's reduce function."""

    def __init__(
        self,
        backend: TableKeyedStateBackend,
        table: MutableMapping[Any, Any],
        reduce: Callable[[Any, Any], Any],
    ) -> None:
        self._backend = backend
        self._table = table
        self._reduce = reduce

    def get(self) -> Any:
        return self._table.get(self._backend.current_key)

    def add(self, value: Any) -> None:
        key = self._backend.current_key
        table = self._table
        if key in table:
            table[key] = self._reduce(table[key], value)
        else:
            table[key] = value

    def clear(self) -> None:
        self._table.pop(self._backend.current_key, None)


class HeapAggregatingState(AggregatingState):
    """Keeps the AggregateFunction's accumulator per key; ``get()`` is ``get_result(acc)``."""

    def __init__(
        self, backend: TableKeyedStateBackend, table: MutableMapping[Any, Any], agg_function: Any
    ) -> None:
        self._backend = backend
        self._table = table
        self._create = agg_function.create_accumulator
        self._add = agg_function.add
        self._result = agg_function.get_result

    def get(self) -> Any:
        key = self._backend.current_key
        if key not in self._table:
            return None
        return self._result(self._table[key])

    def add(self, value: Any) -> None:
        key = self._backend.current_key
        table = self._table
        acc = table[key] if key in table else self._create()
        table[key] = self._add(value, acc)

    def clear(self) -> None:
        self._table.pop(self._backend.current_key, None)
