"""Keyed state kept in Python dicts (Flink's HeapKeyedStateBackend / HashMapStateBackend).

One backend per keyed operator of a subtask. The operator sets
:attr:`HeapKeyedStateBackend.current_key` before it hands a record to user
code; every state object reads that attribute, so user code sees the state of
the record's key without passing keys around.

Layout: one *state table* per registered state name, a plain dict
``key -> value``. Key groups are not stored: they are a pure function of the
key, so a snapshot can split each table by key group when it is taken (see
:meth:`HeapKeyedStateBackend.entries_by_key_group`) and restore at another
parallelism, while the per-record path stays a single dict operation.

Namespaced states (window contents, trigger state, ``window_state()``) have a
second level inside their table, ``key -> {namespace -> value}``, scoped by
:attr:`HeapKeyedStateBackend.current_namespace`. Timers are keyed state too:
one :class:`HeapTimerQueue` per operator and time domain, registered here so
a snapshot finds them with the state tables.

Registration, the state objects and timers are shared with the embedded-store
backend (:class:`~flott.runtime.state.heap.table_backend.TableKeyedStateBackend`);
this class only decides that tables are dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, cast

from flott.runtime.state.backend import StateKind
from flott.runtime.state.heap.heap_snapshot import (
    KeyGroupIndex,
    capture_table,
    copy_table,
    split_by_key_group,
)
from flott.runtime.state.heap.table_backend import TableKeyedStateBackend, descriptor_name

__all__ = ["HeapKeyedStateBackend", "StateKind", "descriptor_name"]


class HeapKeyedStateBackend(TableKeyedStateBackend):
    """The keyed state of one operator in one subtask, in dicts."""

    def _new_table(self, name: str, kind: StateKind) -> dict[Any, Any]:
        return {}

    def state_table(self, name: str, kind: StateKind = "operator") -> dict[Any, Any]:
        return cast(dict[Any, Any], super().state_table(name, kind))

    def namespaced_table(self, name: str, kind: StateKind) -> dict[Any, dict[Any, Any]]:
        return cast(dict[Any, dict[Any, Any]], super().namespaced_table(name, kind))

    def _index(self, name: str) -> KeyGroupIndex:
        """The :class:`KeyGroupIndex` of state ``name`` (made on first use)."""
        indexes: dict[str, KeyGroupIndex] = self.__dict__.setdefault("_key_group_indexes", {})
        index = indexes.get(name)
        if index is None:
            index = indexes.setdefault(name, KeyGroupIndex(self.max_parallelism))
        return index

    def entries_by_key_group(self, name: str) -> dict[int, dict[Any, Any]]:
        """State ``name`` split per key group: what a checkpoint writes and a rescale redistributes.

        A key's group is computed once and kept in the state's :class:`KeyGroupIndex` (hashing a
        key's stable encoding costs microseconds; a checkpoint every second would redo it for
        every key every time).
        """
        table = self._tables.get(name)
        if not table:
            return {}
        return dict(self._index(name).split(table))

    def capture_key_group_entries(
        self,
    ) -> tuple[Iterable[tuple[int, dict[str, dict[Any, Any]]]], Callable[[], None]]:
        """The synchronous part of a checkpoint: every table copied (:func:`capture_table`), split
        per key group when the writer iterates. TTL states cleaned up in snapshots are read now."""
        if self._snapshot_purges:
            copied = [
                (group, {name: copy_table(values) for name, values in states.items()})
                for group, states in self.iter_key_group_entries()
            ]
            return copied, lambda: None
        tables = {name: capture_table(cast(dict[Any, Any], table)) for name, table in self._tables.items()}
        indexes = {name: self._index(name) for name in tables}
        return split_by_key_group(tables, indexes), lambda: None

    def _scan_key_group_entries(self) -> Iterator[tuple[int, dict[str, dict[Any, Any]]]]:
        """Every state split per key group, one key group at a time, ascending.

        The split holds references to the values (no copies): the heap holds all state anyway.
        """
        split = {name: self.entries_by_key_group(name) for name in self._tables}
        groups: set[int] = set()
        for by_group in split.values():
            groups.update(by_group)
        for group in sorted(groups):
            yield group, {name: by_group[group] for name, by_group in split.items() if group in by_group}
