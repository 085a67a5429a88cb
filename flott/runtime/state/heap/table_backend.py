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
from typing import Any, ClassVar

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
from flott.runtime.state.heap.ttl_states import (
    TtlAggregatingState,
    TtlListState,
    TtlMapState,
    TtlNamespacedAggregatingState,
    TtlNamespacedListState,
    TtlNamespacedMapState,
    TtlNamespacedReducingState,
    TtlNamespacedValueState,
    TtlReducingState,
    TtlValueState,
)
from flott.runtime.state.key_groups import KeyGroupRange
from flott.runtime.state.ttl import (
    IncrementalCleanup,
    Purge,
    TtlPolicy,
    TtlTimeProvider,
    migrate_table,
    purger,
    ttl_policy,
    wall_clock_millis,
)

TtlFactory = Callable[[MutableMapping[Any, Any], TtlPolicy, "IncrementalCleanup | None"], object]


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
    """Registration of states and timer queues over tables made by :meth:`_new_table`.

    States whose descriptor enables TTL get the ``ttl_states`` objects instead (decided once, when
    the state is registered: a state without TTL pays nothing per access); see
    ``flott.runtime.state.ttl`` for what they store, and :meth:`iter_key_group_entries` for the
    cleanup in snapshots.
    """

    backend_type: ClassVar[str] = "hashmap"
    """Flink's ``state.backend.type`` of this backend (TTL cleanup strategies depend on it)."""

    def __init__(
        self,
        max_parallelism: int,
        key_group_range: KeyGroupRange,
        ttl_time_provider: TtlTimeProvider | None = None,
    ) -> None:
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
        self.ttl_time_provider: TtlTimeProvider = ttl_time_provider or wall_clock_millis
        """Milliseconds now, for state TTL (wall-clock time; tests put a fake clock here)."""
        self._ttl: dict[str, TtlPolicy] = {}
        """Registered states with TTL."""
        self._registered: set[str] = set()
        """Names a state handle was created for (TTL or not)."""
        self._snapshot_purges: dict[str, tuple[Purge, bool]] = {}
        """TTL states whose expired entries stay out of snapshots: ``name -> (purge, drop locally)``."""
        self._restored: set[str] = set()
        """Restored states not registered yet: their TTL form is checked when they are."""

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
        ttl_factory: TtlFactory,
        namespaced: bool = False,
    ) -> Any:
        name = descriptor_name(descriptor)
        self._claim(name, namespaced)
        cache_key = f"\0ns\0{name}" if namespaced else name
        state = self._states.get(cache_key)
        table = self._table(name, kind)
        if state is None:
            policy = ttl_policy(descriptor, self.backend_type)
            self._register(name, kind, namespaced, policy, table)
            if policy is None:
                state = factory(table)
            else:
                cleanup = None
                if policy.incremental_cleanup_size:
                    cleanup = IncrementalCleanup(
                        table, kind, namespaced, policy.ttl_ms, policy.incremental_cleanup_size
                    )
                state = ttl_factory(table, policy, cleanup)
            self._states[cache_key] = state
        return state

    def _ttl_now(self) -> int:
        return self.ttl_time_provider()

    def _register(
        self,
        name: str,
        kind: StateKind,
        namespaced: bool,
        policy: TtlPolicy | None,
        table: MutableMapping[Any, Any],
    ) -> None:
        """Record a state's TTL; bring restored entries to its form (Flink 2's TTL migration)."""
        if name in self._registered and (name in self._ttl) != (policy is not None):
            raise ValueError(
                f"state '{name}' is already registered {'with' if name in self._ttl else 'without'} "
                f"time-to-live; use another name"
            )
        self._registered.add(name)
        if name in self._restored:
            self._restored.discard(name)
            migrate_table(table, kind, namespaced, policy is not None, self.ttl_time_provider())
        if policy is None:
            return
        self._ttl[name] = policy
        if policy.cleanup_in_full_snapshot or policy.cleanup_on_store_scan:
            self._snapshot_purges[name] = (
                purger(kind, namespaced, policy.ttl_ms),
                policy.cleanup_on_store_scan,
            )

    def _forget_ttl(self) -> None:
        self._ttl.clear()
        self._registered.clear()
        self._snapshot_purges.clear()
        self._restored.clear()

    def has_ttl(self, name: str) -> bool:
        """Whether state ``name`` was registered with time-to-live."""
        return name in self._ttl

    # --- per-key states -------------------------------------------------------------------------

    def get_value_state(self, descriptor: Any) -> HeapValueState:
        default = getattr(descriptor, "default_value", None)
        return self._get_or_create(
            "value",
            descriptor,
            lambda t: HeapValueState(self, t, default),
            lambda t, p, c: TtlValueState(self, t, p, c, default),
        )

    def get_list_state(self, descriptor: Any) -> HeapListState:
        return self._get_or_create(
            "list", descriptor, lambda t: HeapListState(self, t), lambda t, p, c: TtlListState(self, t, p, c)
        )

    def get_map_state(self, descriptor: Any) -> HeapMapState:
        return self._get_or_create(
            "map", descriptor, lambda t: HeapMapState(self, t), lambda t, p, c: TtlMapState(self, t, p, c)
        )

    def get_reducing_state(self, descriptor: Any) -> HeapReducingState:
        reduce = _reduce_callable(descriptor)
        return self._get_or_create(
            "reducing",
            descriptor,
            lambda t: HeapReducingState(self, t, reduce),
            lambda t, p, c: TtlReducingState(self, t, p, c, reduce),
        )

    def get_aggregating_state(self, descriptor: Any) -> HeapAggregatingState:
        agg = _agg_function(descriptor)
        return self._get_or_create(
            "aggregating",
            descriptor,
            lambda t: HeapAggregatingState(self, t, agg),
            lambda t, p, c: TtlAggregatingState(self, t, p, c, agg),
        )

    # --- namespaced (per window) states --------------------------------------------------------

    def get_namespaced_value_state(self, descriptor: Any) -> HeapNamespacedValueState:
        default = getattr(descriptor, "default_value", None)
        return self._get_or_create(
            "value",
            descriptor,
            lambda t: HeapNamespacedValueState(self, t, default),
            lambda t, p, c: TtlNamespacedValueState(self, t, p, c, default),
            namespaced=True,
        )

    def get_namespaced_list_state(self, descriptor: Any) -> HeapNamespacedListState:
        return self._get_or_create(
            "list",
            descriptor,
            lambda t: HeapNamespacedListState(self, t),
            lambda t, p, c: TtlNamespacedListState(self, t, p, c),
            namespaced=True,
        )

    def get_namespaced_map_state(self, descriptor: Any) -> HeapNamespacedMapState:
        return self._get_or_create(
            "map",
            descriptor,
            lambda t: HeapNamespacedMapState(self, t),
            lambda t, p, c: TtlNamespacedMapState(self, t, p, c),
            namespaced=True,
        )

    def get_namespaced_reducing_state(self, descriptor: Any) -> HeapNamespacedReducingState:
        reduce = _reduce_callable(descriptor)
        return self._get_or_create(
            "reducing",
            descriptor,
            lambda t: HeapNamespacedReducingState(self, t, reduce),
            lambda t, p, c: TtlNamespacedReducingState(self, t, p, c, reduce),
            namespaced=True,
        )

    def get_namespaced_aggregating_state(self, descriptor: Any) -> HeapNamespacedAggregatingState:
        agg = _agg_function(descriptor)
        return self._get_or_create(
            "aggregating",
            descriptor,
            lambda t: HeapNamespacedAggregatingState(self, t, agg),
            lambda t, p, c: TtlNamespacedAggregatingState(self, t, p, c, agg),
            namespaced=True,
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
        """``(key group, {state name: {key: value}})`` for each key group with state, ascending.

        What a checkpoint writes. TTL states with a snapshot cleanup have their expired values
        left out (the local state keeps them, as in Flink's full-snapshot cleanup), and on RocksDB
        with background cleanup they are also dropped from the store once the scan is done.
        """
        if not self._snapshot_purges:
            return self._scan_key_group_entries()
        return self._purged_key_group_entries()

    def _scan_key_group_entries(self) -> Iterator[tuple[int, dict[str, dict[Any, Any]]]]:
        """Every state as stored, per key group, ascending (see :meth:`iter_key_group_entries`)."""
        raise NotImplementedError

    def _purged_key_group_entries(self) -> Iterator[tuple[int, dict[str, dict[Any, Any]]]]:
        purges = self._snapshot_purges
        now = self.ttl_time_provider()
        local: dict[str, list[tuple[Any, Any]]] = {}
        for group, states in self._scan_key_group_entries():
            out = states
            for name, (purge, drop_locally) in purges.items():
                entries = states.get(name)
                if not entries:
                    continue
                kept: dict[Any, Any] = {}
                changed = False
                for key, stored in entries.items():
                    left = purge(stored, now)
                    if left is stored:
                        kept[key] = stored
                        continue
                    changed = True
                    if left is not None:
                        kept[key] = left
                    if drop_locally:
                        local.setdefault(name, []).append((key, left))
                if changed:
                    if out is states:
                        out = dict(states)
                    if kept:
                        out[name] = kept
                    else:
                        del out[name]
            if out:
                yield group, out
        for name, changes in local.items():
            table = self._tables[name]
            for key, left in changes:
                if left is None:
                    table.pop(key, None)
                else:
                    table[key] = left

    def restore_entries(self, name: str, kind: StateKind, entries: dict[Any, Any]) -> None:
        """Put restored ``key -> value`` entries of state ``name`` back.

        A state registered already gets the entries in its TTL form; others are brought to it
        when registered.
        """
        self._prepare_restore(name, kind, entries)
        self._table(name, kind).update(entries)

    def _prepare_restore(self, name: str, kind: StateKind, entries: dict[Any, Any]) -> None:
        if name not in self._kinds:
            self._unclaimed.add(name)
        if name in self._registered:
            migrate_table(
                entries, kind, name in self._namespaced, name in self._ttl, self.ttl_time_provider()
            )
        else:
            self._restored.add(name)

    def dispose(self) -> None:
        """Drop all state (the task is done with it)."""
        for table in self._tables.values():
            table.clear()
        for queue in self._timer_queues.values():
            queue.clear()
        self._states.clear()
        self._forget_ttl()
        self.current_key = None
        self.current_namespace = None
