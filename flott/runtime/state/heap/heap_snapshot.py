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
from collections.abc import Callable, Iterator
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
    if all(map(_is_atomic_type, map(type, values))) or _all_flat_tuples(values):
        return table.copy()
    return pickle.dumps(table, protocol=5)


def _all_flat_tuples(values: Any) -> bool:
    """Whether every value is a tuple of immutable atoms (a reduce's ``(word, count)``, a Row-less
    Tuple type): immutable as a whole, so shared by ``dict.copy`` instead of pickled on the task
    thread and unpickled again on the writer. Checked in C: the values' types, then the types of
    their items chained together; a nested tuple or a list inside fails it (and is pickled)."""
    types = set(map(type, values))
    return types == {tuple} and all(map(_is_atomic_type, map(type, chain.from_iterable(values))))


def split_by_key_group(
    tables: dict[str, dict[Any, Any] | bytes],
    max_parallelism: int,
    known_groups: dict[str, dict[Any, int]],
    remember: Callable[[str, dict[Any, int]], None],
) -> Iterator[tuple[int, dict[str, dict[Any, Any]]]]:
    """Captured tables -> ``(key group, {state: {key: value}})`` ascending (on the writer).

    ``known_groups`` are key groups computed before (hashing a key costs microseconds);
    ``remember(name, groups)`` hands the groups of each state back for the next checkpoint."""
    per_group: dict[int, dict[str, dict[Any, Any]]] = {}
    for name, captured in tables.items():
        table: dict[Any, Any] = pickle.loads(captured) if isinstance(captured, bytes) else captured
        known = known_groups.get(name, {})
        groups: dict[Any, int] = {}
        for key, value in table.items():
            group = known.get(key)
            if group is None:
                group = assign_to_key_group(key, max_parallelism)
            groups[key] = group
            states = per_group.get(group)
            if states is None:
                states = per_group[group] = {}
            entries = states.get(name)
            if entries is None:
                entries = states[name] = {}
            entries[key] = value
        remember(name, groups)
    for group in sorted(per_group):
        yield group, per_group[group]
