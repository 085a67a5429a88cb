"""What a window holds between firings (Flink's window state: a Reducing, Aggregating or List state
namespaced by window).

The window operator reaches its contents with the key and the namespace
explicit, straight on the state table ``key -> {window -> contents}``, instead
of through a state object that reads the backend's current key and namespace:
that is the per-record path, and it saves two attribute writes and a call per
element. The table is registered in the backend as a namespaced state, so
snapshots see it like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, MutableMapping
from typing import Any

from flott.runtime.state.backend import KeyedStateBackend
from flott.runtime.state.heap.heap_keyed_state_backend import StateKind

WINDOW_CONTENTS_STATE = "window-contents"
"""State name of the window contents (Flink's ``window-contents``)."""

_ABSENT = object()


def _append(values: list[Any], value: Any) -> list[Any]:
    values.append(value)
    return values


class WindowContents:
    """Add to, read, clear and merge the contents of ``(key, window)``.

    The window operator's per-element loop adds to non-empty contents with
    :attr:`fold`, the most direct callable there is (the user's own ``add`` or
    ``reduce`` where there is one): ``fold(value, contents)`` when
    :attr:`fold_value_first`, else ``fold(contents, value)``; either returns the new contents.
    """

    fold: Callable[[Any, Any], Any]
    fold_value_first = False

    def __init__(self, backend: KeyedStateBackend, kind: StateKind) -> None:
        self.table: MutableMapping[Any, Any] = backend.namespaced_table(WINDOW_CONTENTS_STATE, kind)

    def add(self, key: Any, namespace: Any, value: Any) -> None:
        raise NotImplementedError

    def first(self, value: Any) -> Any:
        """The stored contents of a window whose first element is ``value``."""
        raise NotImplementedError

    def combine(self, contents: Any, value: Any) -> Any:
        """``contents`` with ``value`` added (may update ``contents`` in place and return it)."""
        raise NotImplementedError

    def get(self, key: Any, namespace: Any) -> Any:
        """The contents to hand to the window function, or None if the window holds nothing."""
        raise NotImplementedError

    def _merge(self, a: Any, b: Any) -> Any:
        raise NotImplementedError

    def clear(self, key: Any, namespace: Any) -> None:
        inner = self.table.get(key)
        if inner is not None:
            inner.pop(namespace, None)
            if not inner:
                del self.table[key]

    def merge_namespaces(self, key: Any, target: Any, sources: Iterable[Any]) -> None:
        inner = self.table.get(key)
        if inner is None:
            return
        merged: Any = _ABSENT
        for namespace in sources:
            value = inner.pop(namespace, _ABSENT)
            if value is not _ABSENT:
                merged = value if merged is _ABSENT else self._merge(merged, value)
        if merged is _ABSENT:
            return
        current = inner.get(target, _ABSENT)
        inner[target] = merged if current is _ABSENT else self._merge(current, merged)


class ReducingContents(WindowContents):
    def __init__(self, backend: KeyedStateBackend, reduce: Callable[[Any, Any], Any]) -> None:
        super().__init__(backend, "reducing")
        self._reduce = reduce
        self.fold = reduce  # reduce(contents, value)

    def add(self, key: Any, namespace: Any, value: Any) -> None:
        inner = self.table.get(key)
        if inner is None:
            self.table[key] = {namespace: value}
            return
        current = inner.get(namespace, _ABSENT)
        inner[namespace] = value if current is _ABSENT else self._reduce(current, value)

    def first(self, value: Any) -> Any:
        return value

    def combine(self, contents: Any, value: Any) -> Any:
        return self._reduce(contents, value)

    def get(self, key: Any, namespace: Any) -> Any:
        inner = self.table.get(key)
        return None if inner is None else inner.get(namespace)

    def _merge(self, a: Any, b: Any) -> Any:
        return self._reduce(a, b)


class AggregatingContents(WindowContents):
    def __init__(self, backend: KeyedStateBackend, agg_function: Any) -> None:
        super().__init__(backend, "aggregating")
        self._create = agg_function.create_accumulator
        self._add = agg_function.add
        self._result = agg_function.get_result
        self._agg = agg_function
        self.fold = self._add  # add(value, accumulator)
        self.fold_value_first = True

    def add(self, key: Any, namespace: Any, value: Any) -> None:
        inner = self.table.get(key)
        if inner is None:
            inner = self.table[key] = {}
        acc = inner.get(namespace, _ABSENT)
        inner[namespace] = self._add(value, self._create() if acc is _ABSENT else acc)

    def first(self, value: Any) -> Any:
        return self._add(value, self._create())

    def combine(self, contents: Any, value: Any) -> Any:
        return self._add(value, contents)

    def get(self, key: Any, namespace: Any) -> Any:
        inner = self.table.get(key)
        if inner is None:
            return None
        acc = inner.get(namespace, _ABSENT)
        return None if acc is _ABSENT else self._result(acc)

    def _merge(self, a: Any, b: Any) -> Any:
        return self._agg.merge(a, b)


class ListContents(WindowContents):
    def __init__(self, backend: KeyedStateBackend) -> None:
        super().__init__(backend, "list")
        self.fold = _append

    def add(self, key: Any, namespace: Any, value: Any) -> None:
        inner = self.table.get(key)
        if inner is None:
            self.table[key] = {namespace: [value]}
            return
        values = inner.get(namespace)
        if values is None:
            inner[namespace] = [value]
        else:
            values.append(value)

    def first(self, value: Any) -> Any:
        return [value]

    def combine(self, contents: Any, value: Any) -> Any:
        contents.append(value)
        return contents

    def get(self, key: Any, namespace: Any) -> Any:
        inner = self.table.get(key)
        if inner is None:
            return None
        values = inner.get(namespace)
        return list(values) if values else None

    def _merge(self, a: list[Any], b: list[Any]) -> list[Any]:
        return a + b
