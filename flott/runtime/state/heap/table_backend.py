"""What every keyed state backend here shares: one ``key -> value`` *table* per state name.

A backend keeps one table per registered state name and hands out state objects
(``flott.runtime.state.heap.heap_states`` / ``heap_namespaced_states``) that index
that table with the backend's current key (and namespace). The heap backend's tables
are dicts; the embedded-store backend's are store-backed ``MutableMapping`` s with a
bounded write-back cache. The state objects, their semantics (PyFlink's: ``update(None)``
clears, empty lists and maps are no state, ...) and the registration rules below are the
same for both, so switching ``state.backend.type`` cannot change what a job computes.

Namespaced states keep ``key -> {namespace -> value}`` in their table (see
``heap_namespaced_states``). Timers: one :class:`HeapTimerQueue` per name, kept in
memory by both backends (see ``flott.runtime.state.rocksdb`` for why).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

from flott.runtime.state.backend import StateKind
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
from flott.runtime.state.key_groups import KeyGroupRange


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


class TableKeyedStateBackend:
    """Registration of states and timer queues over tables made by :meth:`_new_table`."""

    def __init__(self, max_parallelism: int, key_group_range: KeyGroupRange) -> None:
        self.current_key: Any = None
        """The key of the record being processed; set by the operator, read by every state object."""
        self.current_namespace: Any = None
        """The namespace (window) of namespaced states; set by the window operator."""
        self.max_parallelism = max_parallelism
        self.key_group_range = key_group_range
        self._tables: dict[str, MutableMapping[Any, Any]] = {}
        self._kinds: dict[str, StateKind] = {}
        self._states: dict[str, object] = {}
        self._namespaced: set[str] = set()
        self._unclaimed: set[str] = set()
        """Restored states no state handle asked for yet: the snapshot does not say whether they are
        namespaced, so the first registration decides."""
        self._timer_queues: dict[str, HeapTimerQueue] = {}

    # --- to implement ---------------------------------------------------------------------------

    def _new_table(self, name: str, kind: StateKind) -> MutableMapping[Any, Any]:
        raise NotImplementedError

    # --- the current key ------------------------------------------------------------------------

    def set_current_key(self, key: Any) -> None:
        self.current_key = key

    def get_current_key(self) -> Any:
        return self.current_key

    # --- tables ---------------------------------------------------------------------------------

    def _table(self, name: str, kind: StateKind) -> MutableMapping[Any, Any]:
        known = self._kinds.get(name)
        if known is None:
            table = self._new_table(name, kind)
            self._kinds[name] = kind
            self._tables[name] = table
            return table
        if known != kind:
            raise ValueError(f"state '{name}' is already registered as {known} state, not {kind} state")
        return self._tables[name]

    def _claim(self, name: str, namespaced: bool) -> None:
        if name in self._unclaimed:
            self._unclaimed.discard(name)
            if namespaced:
                self._namespaced.add(name)
            return
        if name in self._kinds and (name in self._namespaced) != namespaced:
            scope = "per window" if name in self._namespaced else "per key"
            raise ValueError(f"state '{name}' is already registered {scope}; use another name")
        if namespaced:
            self._namespaced.add(name)

    def state_table(self, name: str, kind: StateKind = "operator") -> MutableMapping[Any, Any]:
        """The ``key -> value`` table of state ``name``, created on first use.

        Operators use this directly for their own state (a keyed reduce keeps its
        running value here) so it lands in the same snapshot as user state.
        """
        self._unclaimed.discard(name)
        return self._table(name, kind)

    def namespaced_table(self, name: str, kind: StateKind) -> MutableMapping[Any, Any]:
        """The ``key -> {namespace -> value}`` table of an operator's own namespaced state."""
        self._claim(name, True)
        return self._table(name, kind)

    def is_namespaced(self, name: str) -> bool:
        return name in self._namespaced

    def _get_or_create(
        self,
        kind: StateKind,
        descriptor: Any,
        factory: Callable[[Any], object],
        namespaced: bool = False,
    ) -> Any:
        name = descriptor_name(descriptor)
        self._claim(name, namespaced)
        cache_key = f"\0ns\0{name}" if namespaced else name
        state = self._states.get(cache_key)
        table = self._table(name, kind)
        if state is None:
            state = factory(table)
            self._states[cache_key] = state
        return state

    # --- per-key states -------------------------------------------------------------------------

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
        table = self._tables.get(name)
        return 0 if table is None else len(table)

    def keys(self, name: str) -> Iterator[Any]:
        """Keys that currently have state ``name`` (Flink's ``getKeys``)."""
        table = self._tables.get(name)
        return iter([] if table is None else list(table))

    def entries_by_key_group(self, name: str) -> dict[int, dict[Any, Any]]:
        """State ``name`` split per key group: what a rescale redistributes."""
        raise NotImplementedError

    def iter_key_group_entries(self) -> Iterator[tuple[int, dict[str, dict[Any, Any]]]]:
        """``(key group, {state name: {key: value}})`` for each key group with state, ascending."""
        raise NotImplementedError

    def restore_entries(self, name: str, kind: StateKind, entries: dict[Any, Any]) -> None:
        """Put restored ``key -> value`` entries of state ``name`` back."""
        if name not in self._kinds:
            self._unclaimed.add(name)
        self._table(name, kind).update(entries)

    def dispose(self) -> None:
        """Drop all state (the task is done with it)."""
        for table in self._tables.values():
            table.clear()
        for queue in self._timer_queues.values():
            queue.clear()
        self._states.clear()
        self.current_key = None
        self.current_namespace = None
