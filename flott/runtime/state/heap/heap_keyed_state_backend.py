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
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Literal

from flott.runtime.state.heap.heap_namespaced_states import (
    HeapNamespacedAggregatingState,
    HeapNamespacedListState,
    HeapNamespacedMapState,
    HeapNamespacedReducingState,
    HeapNamespacedValueState,
)
from flott.runtime.state.heap.heap_states import (
    HeapAggregatingState,
    HeapListState,
    HeapMapState,
    HeapReducingState,
    HeapValueState,
)
from flott.runtime.state.heap.heap_timer_queue import HeapTimerQueue
from flott.runtime.state.key_groups import KeyGroupRange, assign_to_key_group

StateKind = Literal["value", "list", "map", "reducing", "aggregating", "operator"]


def descriptor_name(descriptor: Any) -> str:
    """The state name of a PyFlink-style StateDescriptor (``name`` attribute or ``get_name()``)."""
    name = getattr(descriptor, "name", None)
    if name is None and callable(getattr(descriptor, "get_name", None)):
        name = descriptor.get_name()
    if not isinstance(name, str) or not name:
        raise ValueError(f"state descriptor {descriptor!r} has no name")
    return name


def _reduce_callable(descriptor: Any) -> Callable[[Any, Any], Any]:
    fn = descriptor.get_reduce_function() if hasattr(descriptor, "get_reduce_function") else None
    if fn is None:
        fn = getattr(descriptor, "reduce_function", None)
    if fn is None:
        raise ValueError(f"reducing state descriptor '{descriptor_name(descriptor)}' has no reduce function")
    method = getattr(fn, "reduce", None)
    return method if callable(method) else fn


def _agg_function(descriptor: Any) -> Any:
    fn = descriptor.get_agg_function() if hasattr(descriptor, "get_agg_function") else None
    if fn is None:
        fn = getattr(descriptor, "agg_function", None)
    if fn is None:
        raise ValueError(
            f"aggregating state descriptor '{descriptor_name(descriptor)}' has no AggregateFunction"
        )
    return fn


class HeapKeyedStateBackend:
    """The keyed state of one operator in one subtask."""

    def __init__(self, max_parallelism: int, key_group_range: KeyGroupRange) -> None:
        self.current_key: Any = None
        """The key of the record being processed; set by the operator, read by every state object."""
        self.current_namespace: Any = None
        """The namespace (window) of namespaced states; set by the window operator."""
        self.max_parallelism = max_parallelism
        self.key_group_range = key_group_range
        self._tables: dict[str, dict[Any, Any]] = {}
        self._kinds: dict[str, StateKind] = {}
        self._states: dict[str, object] = {}
        self._namespaced: set[str] = set()
        self._timer_queues: dict[str, HeapTimerQueue] = {}

    def set_current_key(self, key: Any) -> None:
        self.current_key = key

    def get_current_key(self) -> Any:
        return self.current_key

    def state_table(self, name: str, kind: StateKind = "operator") -> dict[Any, Any]:
        """The ``key -> value`` dict of state ``name``, created on first use.

        Operators use this directly for their own state (a keyed reduce keeps its
        running value here) so it lands in the same snapshot as user state.
        """
        known = self._kinds.get(name)
        if known is None:
            self._kinds[name] = kind
            table: dict[Any, Any] = {}
            self._tables[name] = table
            return table
        if known != kind:
            raise ValueError(f"state '{name}' is already registered as {known} state, not {kind} state")
        return self._tables[name]

    def _get_or_create(
        self,
        kind: StateKind,
        descriptor: Any,
        factory: Callable[[dict[Any, Any]], object],
        namespaced: bool = False,
    ) -> Any:
        name = descriptor_name(descriptor)
        if (name in self._namespaced) != namespaced and name in self._kinds:
            scope = "per window" if name in self._namespaced else "per key"
            raise ValueError(f"state '{name}' is already registered {scope}; use another name")
        cache_key = f"\0ns\0{name}" if namespaced else name
        state = self._states.get(cache_key)
        table = self.state_table(name, kind)
        if namespaced:
            self._namespaced.add(name)
        if state is None:
            state = factory(table)
            self._states[cache_key] = state
        return state

    def get_value_state(self, descriptor: Any) -> HeapValueState:
        default = getattr(descriptor, "default_value", None)
        return self._get_or_create("value", descriptor, lambda t: HeapValueState(self, t, default))

    def get_list_state(self, descriptor: Any) -> HeapListState:
        return self._get_or_create("list", descriptor, lambda t: HeapListState(self, t))

    def get_map_state(self, descriptor: Any) -> HeapMapState:
        return self._get_or_create("map", descriptor, lambda t: HeapMapState(self, t))

    def get_reducing_state(self, descriptor: Any) -> HeapReducingState:
        reduce = _reduce_callable(descriptor)
        return self._get_or_create("reducing", descriptor, lambda t: HeapReducingState(self, t, reduce))

    def get_aggregating_state(self, descriptor: Any) -> HeapAggregatingState:
        agg = _agg_function(descriptor)
        return self._get_or_create("aggregating", descriptor, lambda t: HeapAggregatingState(self, t, agg))

    # --- namespaced (per window) states --------------------------------------------------------

    def get_namespaced_value_state(self, descriptor: Any) -> HeapNamespacedValueState:
        default = getattr(descriptor, "default_value", None)
        return self._get_or_create(
            "value", descriptor, lambda t: HeapNamespacedValueState(self, t, default), namespaced=True
        )

    def get_namespaced_list_state(self, descriptor: Any) -> HeapNamespacedListState:
        return self._get_or_create(
            "list", descriptor, lambda t: HeapNamespacedListState(self, t), namespaced=True
        )

    def get_namespaced_map_state(self, descriptor: Any) -> HeapNamespacedMapState:
        return self._get_or_create(
            "map", descriptor, lambda t: HeapNamespacedMapState(self, t), namespaced=True
        )

    def get_namespaced_reducing_state(self, descriptor: Any) -> HeapNamespacedReducingState:
        reduce = _reduce_callable(descriptor)
        return self._get_or_create(
            "reducing", descriptor, lambda t: HeapNamespacedReducingState(self, t, reduce), namespaced=True
        )

    def get_namespaced_aggregating_state(self, descriptor: Any) -> HeapNamespacedAggregatingState:
        agg = _agg_function(descriptor)
        return self._get_or_create(
            "aggregating", descriptor, lambda t: HeapNamespacedAggregatingState(self, t, agg), namespaced=True
        )

    def namespaced_table(self, name: str, kind: StateKind) -> dict[Any, dict[Any, Any]]:
        """The ``key -> {namespace -> value}`` table of an operator's own namespaced state."""
        if name in self._kinds and name not in self._namespaced:
            raise ValueError(f"state '{name}' is already registered per key; use another name")
        self._namespaced.add(name)
        return self.state_table(name, kind)

    def is_namespaced(self, name: str) -> bool:
        return name in self._namespaced

    # --- timers -------------------------------------------------------------------------------

    def timer_queue(self, name: str) -> HeapTimerQueue:
        """The timer queue ``name`` (one per operator and time domain), created on first use."""
        queue = self._timer_queues.get(name)
        if queue is None:
            queue = self._timer_queues[name] = HeapTimerQueue(name)
        return queue

    def timer_queues(self) -> dict[str, HeapTimerQueue]:
        return dict(self._timer_queues)

    # --- inspection and snapshots -------------------------------------------------------------

    def state_names(self) -> list[str]:
        return list(self._tables)

    def state_kind(self, name: str) -> StateKind:
        return self._kinds[name]

    def num_keys(self, name: str) -> int:
        return len(self._tables.get(name, ()))

    def keys(self, name: str) -> Iterator[Any]:
        """Keys that currently have state ``name`` (Flink's ``getKeys``)."""
        return iter(list(self._tables.get(name, ())))

    def entries_by_key_group(self, name: str) -> dict[int, dict[Any, Any]]:
        """State ``name`` split per key group: what a checkpoint writes and a rescale redistributes."""
        out: dict[int, dict[Any, Any]] = {}
        max_par = self.max_parallelism
        for key, value in self._tables.get(name, {}).items():
            out.setdefault(assign_to_key_group(key, max_par), {})[key] = value
        return out

    def restore_entries(self, name: str, kind: StateKind, entries: dict[Any, Any]) -> None:
        """Put restored ``key -> value`` entries of state ``name`` back (used by restore, later)."""
        self.state_table(name, kind).update(entries)

    def dispose(self) -> None:
        """Drop all state (the task is done with it)."""
        for table in self._tables.values():
            table.clear()
        for queue in self._timer_queues.values():
            queue.clear()
        self._states.clear()
        self.current_key = None
        self.current_namespace = None
