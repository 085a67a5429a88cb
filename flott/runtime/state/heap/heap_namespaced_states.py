"""Keyed state scoped to a namespace as well as a key (Flink's namespaced ``InternalKvState``).

Windows keep their contents, their triggers' state and ``window_state()`` per
*(key, window)*: the window is the namespace. The table of such a state is
``key -> {namespace -> value}``, so it still splits per key group by its
first level (checkpoints need nothing special), and a key's windows are found
without scanning. Each state object reads the backend's current key *and*
current namespace, which the window operator sets before calling a trigger or
a window function.

The merging states (list, reducing, aggregating) can fold several namespaces
into one (:meth:`merge_namespaces`): what session windows do when they merge.

Shared by both backends, like ``heap_states`` (on RocksDB a key's ``{namespace -> value}``
dict is one stored value).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, MutableMapping
from typing import TYPE_CHECKING, Any

from flott.api.common.state import AggregatingState, ListState, MapState, ReducingState, ValueState

if TYPE_CHECKING:
    from flott.runtime.state.heap.table_backend import TableKeyedStateBackend

_ABSENT = object()


class _Namespaced:
    """Access to the cell ``table[current key][current namespace]``."""

    def __init__(self, backend: TableKeyedStateBackend, table: MutableMapping[Any, Any]) -> None:
        self._backend = backend
        self._table = table

    def _get(self, namespace: Any = _ABSENT) -> Any:
        inner = self._table.get(self._backend.current_key)
        if inner is None:
            return _ABSENT
        ns = self._backend.current_namespace if namespace is _ABSENT else namespace
        return inner.get(ns, _ABSENT)

    def _set(self, value: Any, namespace: Any = _ABSENT) -> None:
        key = self._backend.current_key
        inner = self._table.get(key)
        if inner is None:
            inner = self._table[key] = {}
        inner[self._backend.current_namespace if namespace is _ABSENT else namespace] = value

    def _pop(self, namespace: Any = _ABSENT) -> Any:
        key = self._backend.current_key
        inner = self._table.get(key)
        if inner is None:
            return _ABSENT
        value = inner.pop(self._backend.current_namespace if namespace is _ABSENT else namespace, _ABSENT)
        if not inner:
            del self._table[key]
        return value

    def clear(self) -> None:
        self._pop()

    def set_current_namespace(self, namespace: Any) -> None:
        """Flink's ``setCurrentNamespace``: the namespace is the backend's, shared by all states."""
        self._backend.current_namespace = namespace


class _Merging(_Namespaced):
    def _merge(self, a: Any, b: Any) -> Any:
        raise NotImplementedError

    def merge_namespaces(self, target: Any, sources: Iterable[Any]) -> None:
        """Fold the values of ``sources`` (then cleared) into ``target``, for the current key."""
        merged = _ABSENT
        for ns in sources:
            value = self._pop(ns)
            if value is _ABSENT:
                continue
            merged = value if merged is _ABSENT else self._merge(merged, value)
        if merged is _ABSENT:
            return
        current = self._get(target)
        self._set(merged if current is _ABSENT else self._merge(current, merged), target)


class HeapNamespacedValueState(_Namespaced, ValueState):
    def __init__(
        self, backend: TableKeyedStateBackend, table: MutableMapping[Any, Any], default: Any = None
    ) -> None:
        super().__init__(backend, table)
        self._default = default

    def value(self) -> Any:
        v = self._get()
        if v is _ABSENT:
            return None if self._default is None else copy.copy(self._default)
        return v

    def update(self, value: Any) -> None:
        if value is None:
            self._pop()
        else:
            self._set(value)


class HeapNamespacedListState(_Merging, ListState):
    def _merge(self, a: list[Any], b: list[Any]) -> list[Any]:
        return a + b

    def get(self) -> list[Any]:
        values = self._get()
        return [] if values is _ABSENT else list(values)

    def add(self, value: Any) -> None:
        if value is None:
            raise ValueError("cannot add None to a ListState")
        values = self._get()
        if values is _ABSENT:
            self._set([value])
        else:
            values.append(value)

    def add_all(self, values: Iterable[Any]) -> None:
        for value in values:
            self.add(value)

    def update(self, values: Iterable[Any] | None) -> None:
        new = [] if values is None else list(values)
        if any(v is None for v in new):
            raise ValueError("cannot add None to a ListState")
        if new:
            self._set(new)
        else:
            self._pop()


class HeapNamespacedReducingState(_Merging, ReducingState):
    def __init__(
        self,
        backend: TableKeyedStateBackend,
        table: MutableMapping[Any, Any],
        reduce: Callable[[Any, Any], Any],
    ) -> None:
        super().__init__(backend, table)
        self._reduce = reduce

    def _merge(self, a: Any, b: Any) -> Any:
        return self._reduce(a, b)

    def get(self) -> Any:
        v = self._get()
        return None if v is _ABSENT else v

    def add(self, value: Any) -> None:
        current = self._get()
        self._set(value if current is _ABSENT else self._reduce(current, value))


class HeapNamespacedAggregatingState(_Merging, AggregatingState):
    def __init__(
        self, backend: TableKeyedStateBackend, table: MutableMapping[Any, Any], agg_function: Any
    ) -> None:
        super().__init__(backend, table)
        self._agg = agg_function

    def _merge(self, a: Any, b: Any) -> Any:
        return self._agg.merge(a, b)

    def get(self) -> Any:
        acc = self._get()
        return None if acc is _ABSENT else self._agg.get_result(acc)

    def add(self, value: Any) -> None:
        acc = self._get()
        if acc is _ABSENT:
            acc = self._agg.create_accumulator()
        self._set(self._agg.add(value, acc))


class HeapNamespacedMapState(_Namespaced, MapState):
    def _map(self) -> dict[Any, Any] | None:
        m = self._get()
        return None if m is _ABSENT else m

    def _map_for_write(self) -> dict[Any, Any]:
        m = self._get()
        if m is _ABSENT:
            m = {}
            self._set(m)
        return m

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
            if not m:
                self._pop()

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
