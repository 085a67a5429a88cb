"""What the synchronous part of a heap backend's checkpoint takes: a copy of every table cheap
enough to make between two records, split into key groups later, on the checkpoint's writer.

Flink's heap backend makes its state tables copy-on-write; here the capture copies up front,
as little as it can: a table whose values are all immutable (ints, strings, bytes, tuples of
such ...) is copied with ``dict.copy`` (C speed, the values shared), a table with mutable values
(a ListState's lists, a MapState's dicts, namespaced states, accumulators changed in place) is
pickled whole (a deep copy in C; the files are pickles anyway). Unpickling and splitting the
copies per key group (hashing each key) is left to the writer thread.
"""

from __future__ import annotations

import copy
import pickle
import threading
from collections.abc import Iterator, Mapping
from itertools import chain
from typing import Any

from flott.runtime.state.key_groups import assign_to_key_group

_ATOMIC: frozenset[type] = frozenset({int, float, str, bytes, bool, type(None), complex, frozenset, range})
_is_atomic_type = _ATOMIC.__contains__


def snapshot_copy(value: Any) -> Any:
    """A copy of ``value`` that later in-place changes of the live state cannot reach: immutable
    values are shared, lists, dicts, sets and tuples copied level by level, anything else deep-copied.
    Containers of immutable values (the common case) are copied in C after a type check by ``map``."""
    t = type(value)
    if t in _ATOMIC:
        return value
    if t is list:
        if all(map(_is_atomic_type, map(type, value))):
            return value.copy()
        return [x if type(x) in _ATOMIC else snapshot_copy(x) for x in value]
    if t is dict:
        if all(map(_is_atomic_type, map(type, value.values()))):
            return value.copy()
        return {k: (x if type(x) in _ATOMIC else snapshot_copy(x)) for k, x in value.items()}
    if t is tuple:
        if all(map(_is_atomic_type, map(type, value))):
            return value
        return tuple(snapshot_copy(x) for x in value)
    if t is set:
        return set(value)
    return copy.deepcopy(value)


def copy_table(table: dict[Any, Any]) -> dict[Any, Any]:
    """A copy of one state's ``key -> value`` dict that later changes of ``table`` cannot reach."""
    if all(map(_is_atomic_type, map(type, table.values()))):
        return table.copy()
    return dict(zip(table.keys(), map(snapshot_copy, table.values()), strict=True))


def capture_table(table: dict[Any, Any]) -> dict[Any, Any] | bytes:
    """The synchronous part's copy of one table: ``dict.copy`` when its values are immutable,
    else the table pickled (a deep copy made in C: 7x faster than copying the values one by one
    in Python; the writer unpickles it, see :func:`split_by_key_group`)."""
    values = table.values()
    types = set(map(type, values))
    if types <= _ATOMIC or (types == _TUPLE and _all_flat_tuples(values)):
        return table.copy()
    return pickle.dumps(table, protocol=5)


_TUPLE: frozenset[type] = frozenset({tuple})


def _all_flat_tuples(values: Any) -> bool:
    """Whether every item of these tuples is an immutable atom (a reduce's ``(word, count)``, a
    Row-less Tuple type): each tuple is then immutable as a whole, so shared by ``dict.copy``
    instead of pickled on the task thread and unpickled again on the writer. Checked in C, as
    the set of the items' types chained together (a quarter fewer instructions than ``all`` over
    them, callgrind); a nested tuple or a list inside fails it (and is pickled)."""
    return set(map(type, chain.from_iterable(values))) <= _ATOMIC


class KeyGroupIndex:
    """The keys of one state table per key group, kept from one checkpoint to the next.

    Hashing a key to its key group costs microseconds in Python, and even with the groups
    remembered, splitting a table key by key in Python was most of the writer thread's time with
    a checkpoint every second. Between two checkpoints the key set of a table rarely changes
    much, so the index keeps each group's keys as a list: when the captured table has the same
    keys as last time (one comparison of two key views, in C) a group's entries are
    ``dict(zip(keys, map(table.__getitem__, keys)))``, in C. New keys are hashed once, removed
    keys rebuild only their groups' lists.

    Used from the writer thread while the task thread goes on: member lists are never changed
    in place once made (a split in progress for another checkpoint may still read them), and
    the lock keeps two writers from updating the index at once.
    """

    def __init__(self, max_parallelism: int) -> None:
        self.max_parallelism = max_parallelism
        self._group_of: dict[Any, int] = {}
        self._members: dict[int, list[Any]] = {}
        self._sorted_groups: list[int] = []
        self._lock = threading.Lock()

    def groups(self, table: Mapping[Any, Any]) -> list[tuple[int, list[Any]]]:
        """``(key group, its keys in table)`` ascending, for the keys of ``table`` now."""
        with self._lock:
            group_of = self._group_of
            if group_of.keys() != table.keys():
                self._update(table)
            members = self._members
            return [(group, members[group]) for group in self._sorted_groups]

    def _update(self, table: Mapping[Any, Any]) -> None:
        group_of, members = self._group_of, self._members
        known = group_of.keys()
        removed = known - table.keys()
        added = table.keys() - known if removed or len(known) != len(table) else set()
        touched: set[int] = set()
        if removed:
            for key in removed:
                touched.add(group_of.pop(key))
            for group in touched:
                kept = [key for key in members[group] if key in group_of]
                if kept:
                    members[group] = kept
                else:
                    del members[group]
        if added:
            max_par = self.max_parallelism
            new: dict[int, list[Any]] = {}
            for key in table:  # the table's order, not the set's: files keep insertion order
                if key in added:
                    group = assign_to_key_group(key, max_par)
                    group_of[key] = group
                    bucket = new.get(group)
                    if bucket is None:
                        bucket = new[group] = []
                    bucket.append(key)
            for group, keys in new.items():
                old = members.get(group)
                members[group] = keys if old is None else old + keys
        self._sorted_groups = sorted(members)

    def split(self, table: Mapping[Any, Any]) -> Iterator[tuple[int, dict[Any, Any]]]:
        """``(key group, {key: value})`` of ``table`` ascending, each group's dict built in C."""
        get = table.__getitem__
        for group, keys in self.groups(table):
            yield group, dict(zip(keys, map(get, keys), strict=True))


def split_by_key_group(
    tables: dict[str, dict[Any, Any] | bytes],
    indexes: dict[str, KeyGroupIndex],
) -> Iterator[tuple[int, dict[str, dict[Any, Any]]]]:
    """Captured tables -> ``(key group, {state: {key: value}})`` ascending (on the writer).

    ``indexes`` are the :class:`KeyGroupIndex` of each state (kept by the backend across
    checkpoints); pickled captures are unpickled here, off the task thread."""
    per_group: dict[int, dict[str, dict[Any, Any]]] = {}
    for name, captured in tables.items():
        table: dict[Any, Any] = pickle.loads(captured) if isinstance(captured, bytes) else captured
        for group, entries in indexes[name].split(table):
            states = per_group.get(group)
            if states is None:
                per_group[group] = {name: entries}
            else:
                states[name] = entries
    for group in sorted(per_group):
        yield group, per_group[group]
