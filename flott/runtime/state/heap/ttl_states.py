"""State objects with time-to-live (Flink's ``TtlValueState``, ``TtlListState``, ``TtlMapState``, ...).

Used instead of ``heap_states`` / ``heap_namespaced_states`` for a descriptor with TTL enabled,
on both backends (like those, they only index a table; ``flott.runtime.state.ttl`` says what the
table holds). A state without TTL never reaches this module, so it costs nothing there.

Semantics are Flink's (``AbstractTtlDecorator.getWrappedWithTtlCheckAndUpdate`` and the state
classes): reading an expired value removes it and returns it once if the visibility is
``ReturnExpiredIfNotCleanedUp``, None (nothing) if ``NeverReturnExpired``; writes stamp the value
with now; ``OnReadAndWrite`` re-stamps what a read returns. Lists: a read returns the unexpired
elements (all elements, if expired ones may be returned) and clears the list only when none is
left; ``OnReadAndWrite`` writes back the unexpired elements re-stamped. Maps: each entry is
checked as it is read, expired entries are removed as they are met. Reducing and aggregating:
an expired value or accumulator is not folded into (a new one starts), unless expired values may
be returned.

Each class is logic over three cell operations, ``_get`` / ``_set`` / ``_pop``, that either the
per-key mixin (:class:`_KeyCell`, ``table[current key]``) or the namespaced one
(``heap_namespaced_states._Namespaced``, ``table[current key][current namespace]``) provides.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, MutableMapping
from typing import TYPE_CHECKING, Any

from flott.api.common.state import AggregatingState, ListState, MapState, ReducingState, ValueState
from flott.runtime.state.heap.heap_namespaced_states import _ABSENT, _Namespaced
from flott.runtime.state.ttl import IncrementalCleanup, TtlPolicy, TtlValue

if TYPE_CHECKING:
    from flott.runtime.state.heap.table_backend import TableKeyedStateBackend


class _KeyCell:
    """The cell ``table[current key]`` (the namespace arguments exist for the shared signatures)."""

    _backend: TableKeyedStateBackend
    _table: MutableMapping[Any, Any]

    def _get(self, namespace: Any = _ABSENT) -> Any:
        return self._table.get(self._backend.current_key, _ABSENT)

    def _set(self, value: Any, namespace: Any = _ABSENT) -> None:
        self._table[self._backend.current_key] = value

    def _pop(self, namespace: Any = _ABSENT) -> Any:
        return self._table.pop(self._backend.current_key, _ABSENT)

    def clear(self) -> None:
        self._pop()


class _Ttl:
    """What every TTL state holds: its policy, the clock, the incremental cleanup."""

    _get: Callable[..., Any]
    _set: Callable[..., None]
    _pop: Callable[..., Any]

    def __init__(
        self,
        backend: TableKeyedStateBackend,
        table: MutableMapping[Any, Any],
        policy: TtlPolicy,
        cleanup: IncrementalCleanup | None,
    ) -> None:
        self._backend = backend
        self._table = table
        self._ttl = policy.ttl_ms
        self._update_on_read = policy.update_on_read
        self._return_expired = policy.return_expired
        self._cleanup = cleanup

    def _now(self) -> int:
        return self._backend.ttl_time_provider()

    def _access(self) -> int:
        """Now, after the incremental cleanup's step: every state access reads the clock once."""
        now: int = self._backend.ttl_time_provider()
        if self._cleanup is not None:
            self._cleanup.step(now)
        return now

    def _read_single(self, now: int) -> Any:
        """The user value of a single-``TtlValue`` cell with expiry and update-on-read (or _ABSENT)."""
        tv = self._get()
        if tv is _ABSENT:
            return _ABSENT
        if tv.last_access_timestamp + self._ttl <= now:
            self._pop()
            return tv.user_value if self._return_expired else _ABSENT
        if self._update_on_read:
            self._set(TtlValue(tv.user_value, now))
        return tv.user_value

    def _unexpired(self, tv: Any, now: int) -> Any:
        """Flink's ``getUnexpired``: the user value, or _ABSENT if absent or expired and hidden."""
        if tv is _ABSENT or tv is None:
            return _ABSENT
        if tv.last_access_timestamp + self._ttl <= now and not self._return_expired:
            return _ABSENT
        return tv.user_value


class _TtlValue(_Ttl):
    def __init__(
        self,
        backend: TableKeyedStateBackend,
        table: MutableMapping[Any, Any],
        policy: TtlPolicy,
        cleanup: IncrementalCleanup | None,
        default: Any = None,
    ) -> None:
        super().__init__(backend, table, policy, cleanup)
        self._default = default

    def value(self) -> Any:
        now = self._access()
        v = self._read_single(now)
        if v is _ABSENT:
            return None if self._default is None else copy.copy(self._default)
        return v

    def update(self, value: Any) -> None:
        now = self._access()
        if value is None:
            self._pop()
        else:
            self._set(TtlValue(value, now))


class _TtlList(_Ttl):
    def get(self) -> list[Any]:
        now = self._access()
        stored = self._get()
        if stored is _ABSENT:
            return []
        ttl = self._ttl
        alive = [tv for tv in stored if tv.last_access_timestamp + ttl > now]
        if not alive:
            self._pop()
            return [tv.user_value for tv in stored] if self._return_expired else []
        if self._update_on_read:
            self._set([TtlValue(tv.user_value, now) for tv in alive])
        if self._return_expired or len(alive) == len(stored):
            return [tv.user_value for tv in stored]
        return [tv.user_value for tv in alive]

    def add(self, value: Any) -> None:
        if value is None:
            raise ValueError("cannot add None to a ListState")
        now = self._access()
        stored = self._get()
        tv = TtlValue(value, now)
        if stored is _ABSENT:
            self._set([tv])
        else:
            stored.append(tv)

    def add_all(self, values: Iterable[Any]) -> None:
        new = list(values)
        if any(v is None for v in new):
            raise ValueError("cannot add None to a ListState")
        now = self._access()
        if not new:
            return
        wrapped = [TtlValue(v, now) for v in new]
        stored = self._get()
        if stored is _ABSENT:
            self._set(wrapped)
        else:
            stored.extend(wrapped)

    def update(self, values: Iterable[Any] | None) -> None:
        new = [] if values is None else list(values)
        if any(v is None for v in new):
            raise ValueError("cannot add None to a ListState")
        now = self._access()
        if new:
            self._set([TtlValue(v, now) for v in new])
        else:
            self._pop()

    def _merge(self, a: list[Any], b: list[Any]) -> list[Any] | None:
        return a + b


class _TtlMap(_Ttl):
    def _map(self) -> dict[Any, Any] | None:
        m = self._get()
        return None if m is _ABSENT else m

    def _map_for_write(self) -> dict[Any, Any]:
        m = self._get()
        if m is _ABSENT:
            m = {}
            self._set(m)
        return m

    def _drop_if_empty(self, m: dict[Any, Any]) -> None:
        if not m:  # an empty map is no state, as for maps without TTL
            self._pop()

    def _read(self, key: Any, now: int) -> Any:
        """The entry's user value with expiry and update-on-read (or _ABSENT)."""
        m = self._map()
        if m is None:
            return _ABSENT
        tv = m.get(key, _ABSENT)
        if tv is _ABSENT:
            return _ABSENT
        if tv.last_access_timestamp + self._ttl <= now:
            del m[key]
            self._drop_if_empty(m)
            return tv.user_value if self._return_expired else _ABSENT
        if self._update_on_read:
            m[key] = TtlValue(tv.user_value, now)
        return tv.user_value

    def _entries(self, now: int) -> list[tuple[Any, Any]]:
        """Every entry as reading it in Flink's entry iterator would return it, cleaning as it goes."""
        m = self._map()
        if m is None:
            return []
        ttl = self._ttl
        out: list[tuple[Any, Any]] = []
        expired: list[Any] = []
        for key, tv in m.items():
            if tv.last_access_timestamp + ttl <= now:
                expired.append(key)
                if self._return_expired:
                    out.append((key, tv.user_value))
            else:
                out.append((key, tv.user_value))
        if self._update_on_read:
            for key, tv in list(m.items()):
                if tv.last_access_timestamp + ttl > now:
                    m[key] = TtlValue(tv.user_value, now)
        for key in expired:
            del m[key]
        if expired:
            self._drop_if_empty(m)
        return out

    def get(self, key: Any) -> Any:
        now = self._access()
        v = self._read(key, now)
        return None if v is _ABSENT else v

    def put(self, key: Any, value: Any) -> None:
        now = self._access()
        self._map_for_write()[key] = TtlValue(value, now)

    def put_all(self, dict_value: dict[Any, Any]) -> None:
        now = self._access()
        if dict_value:
            self._map_for_write().update({k: TtlValue(v, now) for k, v in dict_value.items()})

    def remove(self, key: Any) -> None:
        self._access()
        m = self._map()
        if m is not None:
            m.pop(key, None)
            self._drop_if_empty(m)

    def contains(self, key: Any) -> bool:
        now = self._access()
        return self._read(key, now) is not _ABSENT

    def items(self) -> list[tuple[Any, Any]]:
        now = self._access()
        return self._entries(now)

    def keys(self) -> list[Any]:
        now = self._access()
        return [k for k, _ in self._entries(now)]

    def values(self) -> list[Any]:
        now = self._access()
        return [v for _, v in self._entries(now)]

    def is_empty(self) -> bool:
        now = self._access()
        return not self._entries(now)


class _TtlReducing(_Ttl):
    def __init__(
        self,
        backend: TableKeyedStateBackend,
        table: MutableMapping[Any, Any],
        policy: TtlPolicy,
        cleanup: IncrementalCleanup | None,
        reduce: Callable[[Any, Any], Any],
    ) -> None:
        super().__init__(backend, table, policy, cleanup)
        self._reduce = reduce

    def get(self) -> Any:
        now = self._access()
        v = self._read_single(now)
        return None if v is _ABSENT else v

    def add(self, value: Any) -> None:
        now = self._access()
        current = self._unexpired(self._get(), now)
        self._set(TtlValue(value if current is _ABSENT else self._reduce(current, value), now))

    def _merge(self, a: Any, b: Any) -> Any:
        """Flink's ``TtlReduceFunction``: unexpired values folded, re-stamped."""
        now = self._now()
        ua, ub = self._unexpired(a, now), self._unexpired(b, now)
        if ua is not _ABSENT and ub is not _ABSENT:
            return TtlValue(self._reduce(ua, ub), now)
        if ua is not _ABSENT:
            return TtlValue(ua, now)
        return None if ub is _ABSENT else TtlValue(ub, now)


class _TtlAggregating(_Ttl):
    def __init__(
        self,
        backend: TableKeyedStateBackend,
        table: MutableMapping[Any, Any],
        policy: TtlPolicy,
        cleanup: IncrementalCleanup | None,
        agg_function: Any,
    ) -> None:
        super().__init__(backend, table, policy, cleanup)
        self._agg = agg_function

    def get(self) -> Any:
        now = self._access()
        acc = self._read_single(now)
        return None if acc is _ABSENT else self._agg.get_result(acc)

    def add(self, value: Any) -> None:
        now = self._access()
        acc = self._unexpired(self._get(), now)
        if acc is _ABSENT:
            acc = self._agg.create_accumulator()
        self._set(TtlValue(self._agg.add(value, acc), now))

    def _merge(self, a: Any, b: Any) -> Any:
        """Flink's ``TtlAggregateFunction.merge``: unexpired accumulators merged, re-stamped."""
        now = self._now()
        ua, ub = self._unexpired(a, now), self._unexpired(b, now)
        if ua is not _ABSENT and ub is not _ABSENT:
            return TtlValue(self._agg.merge(ua, ub), now)
        if ua is not _ABSENT:
            return TtlValue(ua, now)
        return None if ub is _ABSENT else TtlValue(ub, now)


class _TtlMerging(_Namespaced):
    """``merge_namespaces`` for namespaced TTL states (a merge may leave nothing: all expired)."""

    _merge: Callable[[Any, Any], Any]

    def merge_namespaces(self, target: Any, sources: Iterable[Any]) -> None:
        merged: Any = None
        for ns in sources:
            value = self._pop(ns)
            if value is _ABSENT:
                continue
            merged = value if merged is None else self._merge(merged, value)
        if merged is None:
            return
        current = self._get(target)
        result = merged if current is _ABSENT else self._merge(current, merged)
        if result is None:
            self._pop(target)
        else:
            self._set(result, target)


# --- per key -------------------------------------------------------------------------------


class TtlValueState(_TtlValue, _KeyCell, ValueState):
    pass


class TtlListState(_TtlList, _KeyCell, ListState):
    pass


class TtlMapState(_TtlMap, _KeyCell, MapState):
    pass


class TtlReducingState(_TtlReducing, _KeyCell, ReducingState):
    pass


class TtlAggregatingState(_TtlAggregating, _KeyCell, AggregatingState):
    pass


# --- per key and namespace (window) -----------------------------------------------------------


class TtlNamespacedValueState(_TtlValue, _Namespaced, ValueState):
    pass


class TtlNamespacedListState(_TtlList, _TtlMerging, ListState):
    pass


class TtlNamespacedMapState(_TtlMap, _Namespaced, MapState):
    pass


class TtlNamespacedReducingState(_TtlReducing, _TtlMerging, ReducingState):
    pass


class TtlNamespacedAggregatingState(_TtlAggregating, _TtlMerging, AggregatingState):
    pass
