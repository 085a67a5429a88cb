"""State time-to-live (Flink's ``org.apache.flink.runtime.state.ttl``): what a TTL state stores and
how expired state is found and cleaned up, for every backend.

A state whose descriptor has ``enable_time_to_live(config)`` (and an update type other than
``Disabled``) keeps each value with the time it was last written (or read, under
``OnReadAndWrite``), as a :class:`TtlValue`. What is wrapped is Flink's choice:

* value, reducing, aggregating state: the value (the accumulator) is one ``TtlValue``;
* list state: every element is one (elements expire one by one);
* map state: every entry's value is one (entries expire one by one).

A value has expired when ``last access + ttl <= now``; ``now`` comes from the backend's
``ttl_time_provider`` (milliseconds; wall-clock time unless a test injects a clock). The state
objects (``heap.ttl_states``) check expiry on every access, so an expired value is never returned
under ``NeverReturnExpired`` even if nothing cleaned it up yet. What cleans up, as in Flink:

* **on access**: an expired value that is read is removed;
* **full snapshot** (``cleanup_full_snapshot()``): expired values are left out of checkpoints and
  savepoints (the local state keeps them until another cleanup removes them);
* **incremental** (``cleanup_incrementally(size, False)``, and by default while
  ``disable_cleanup_in_background()`` was not called): on the heap backend every access of the
  state also checks ``size`` more keys of it, round robin through the whole table
  (:class:`IncrementalCleanup`). Flink does nothing with it on RocksDB; neither does flott;
* **RocksDB background cleanup** (``cleanup_in_rocksdb_compact_filter(n)``, and by default on
  RocksDB): Flink drops expired entries when RocksDB compacts its files. ``rocksdict`` offers no
  compaction filter, so flott drops them where it rewrites or reads entries anyway: when its
  object cache writes an entry back to the store, and in the scan every checkpoint makes (expired
  entries go neither into the checkpoint nor back into the store). An entry that stays in the store
  untouched and is never checkpointed stays until it is read. On the heap backend Flink ignores
  this strategy, and so does flott.

Refused (:class:`~flott.errors.NotYetSupportedError`): ``run_cleanup_for_every_record=True``
(flott's operators set the current key as a plain attribute, per record, with no hook a cleanup
could run from: paying for one on every record of every job would slow the data path) and a TTL
that is not positive (Flink's own check); both are refused when the program calls
``enable_time_to_live`` (:func:`flott.api.common.state.validate_ttl_config`).

Snapshots carry the ``TtlValue`` objects, so timestamps survive savepoints and restores. A state
restored with timestamps into a descriptor without TTL loses them, and one restored without into
a descriptor with TTL gets the restore time as last access: Flink 2's TTL state migration
(``TtlAwareSerializer``), done when the state is first registered (:func:`migrate_table`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from flott.api.common.state import StateTtlConfig, validate_ttl_config

__all__ = [
    "IncrementalCleanup",
    "TtlPolicy",
    "TtlValue",
    "is_ttl_stored",
    "migrate_table",
    "purger",
    "ttl_policy",
    "wall_clock_millis",
]

TtlTimeProvider = Callable[[], int]
"""Milliseconds now (Flink's ``TtlTimeProvider``)."""


def wall_clock_millis() -> int:
    """Processing time in milliseconds, as Flink's default TTL time provider."""
    return time.time_ns() // 1_000_000


class TtlValue:
    """A user value with the time it was last accessed (Flink's ``TtlValue``)."""

    __slots__ = ("last_access_timestamp", "user_value")

    def __init__(self, user_value: Any, last_access_timestamp: int) -> None:
        self.user_value = user_value
        self.last_access_timestamp = last_access_timestamp

    def __reduce__(self) -> tuple[Any, ...]:
        return (TtlValue, (self.user_value, self.last_access_timestamp))

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is TtlValue
            and self.user_value == other.user_value
            and self.last_access_timestamp == other.last_access_timestamp
        )

    def __hash__(self) -> int:
        return hash((self.user_value, self.last_access_timestamp))

    def __repr__(self) -> str:
        return f"TtlValue({self.user_value!r}, {self.last_access_timestamp})"


@dataclass(frozen=True)
class TtlPolicy:
    """A :class:`~flott.api.common.state.StateTtlConfig` resolved for one backend."""

    ttl_ms: int
    update_on_read: bool
    return_expired: bool
    cleanup_in_full_snapshot: bool
    incremental_cleanup_size: int
    """Keys checked per state access (0: no incremental cleanup)."""
    cleanup_on_store_scan: bool
    """RocksDB: drop expired entries on write-back from the cache and when a checkpoint scans the store."""


def ttl_policy(descriptor: Any, backend_type: str) -> TtlPolicy | None:
    """The TTL policy of ``descriptor`` on a ``hashmap`` or ``rocksdb`` backend (None: no TTL).

    Raises NotYetSupportedError for settings flott cannot honour, ValueError for invalid ones.
    """
    get_config = getattr(descriptor, "get_ttl_config", None)
    config = get_config() if callable(get_config) else getattr(descriptor, "_ttl_config", None)
    if config is None or not config.is_enabled():
        return None
    validate_ttl_config(config)
    strategies = config.get_cleanup_strategies()
    incremental = strategies.get_incremental_cleanup_strategy()
    compaction = strategies.get_rocksdb_compact_filter_cleanup_strategy()
    on_heap = backend_type != "rocksdb"
    return TtlPolicy(
        ttl_ms=config.get_ttl_millis(),
        update_on_read=config.get_update_type() is StateTtlConfig.UpdateType.OnReadAndWrite,
        return_expired=(
            config.get_state_visibility() is StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp
        ),
        cleanup_in_full_snapshot=strategies.in_full_snapshot(),
        incremental_cleanup_size=(
            incremental.get_cleanup_size() if on_heap and incremental is not None else 0
        ),
        cleanup_on_store_scan=not on_heap and compaction is not None,
    )


# --- stored values: expiry, detection, migration ---------------------------------------------

Purge = Callable[[Any, int], Any]
"""``purge(stored, now)``: the stored value without its expired parts, None if nothing is left.

Never changes ``stored``; returns it unchanged (the same object) if nothing expired.
"""


def purger(kind: str, namespaced: bool, ttl_ms: int) -> Purge:
    """The :data:`Purge` function of a TTL state of ``kind``."""

    def single(tv: Any, now: int) -> Any:
        return None if tv.last_access_timestamp + ttl_ms <= now else tv

    def elements(values: Any, now: int) -> Any:
        for tv in values:  # usually nothing expired: look before copying
            if tv.last_access_timestamp + ttl_ms <= now:
                break
        else:
            return values
        alive = [tv for tv in values if tv.last_access_timestamp + ttl_ms > now]
        return alive or None

    def entries(mapping: Any, now: int) -> Any:
        for tv in mapping.values():
            if tv.last_access_timestamp + ttl_ms <= now:
                break
        else:
            return mapping
        alive = {k: tv for k, tv in mapping.items() if tv.last_access_timestamp + ttl_ms > now}
        return alive or None

    cell = elements if kind == "list" else entries if kind == "map" else single
    if not namespaced:
        return cell

    def per_namespace(by_namespace: Any, now: int) -> Any:
        kept = {}
        changed = False
        for ns, stored in by_namespace.items():
            left = cell(stored, now)
            if left is not stored:
                changed = True
            if left is not None:
                kept[ns] = left
        if not changed:
            return by_namespace
        return kept or None

    return per_namespace


def _cell_is_ttl(kind: str, stored: Any) -> bool | None:
    """Whether one cell holds TtlValues (None: cannot tell, e.g. an empty list)."""
    if kind == "list":
        return None if not stored else type(stored[0]) is TtlValue
    if kind == "map":
        for value in stored.values():
            return type(value) is TtlValue
        return None
    return type(stored) is TtlValue


def is_ttl_stored(kind: str, namespaced: bool, stored: Any) -> bool | None:
    """Whether a stored table value (a key's state) carries TTL timestamps (None: cannot tell)."""
    if not namespaced:
        return _cell_is_ttl(kind, stored)
    for cell in stored.values():
        found = _cell_is_ttl(kind, cell)
        if found is not None:
            return found
    return None


def _convert_cell(kind: str, stored: Any, to_ttl: bool, now: int) -> Any:
    if kind == "list":
        if to_ttl:
            return [TtlValue(v, now) for v in stored]
        return [tv.user_value for tv in stored]
    if kind == "map":
        if to_ttl:
            return {k: TtlValue(v, now) for k, v in stored.items()}
        return {k: tv.user_value for k, tv in stored.items()}
    return TtlValue(stored, now) if to_ttl else stored.user_value


def migrate_table(
    table: MutableMapping[Any, Any], kind: str, namespaced: bool, to_ttl: bool, now: int
) -> bool:
    """Convert restored state to (``to_ttl``) or from TTL form, in place; True if it converted.

    Restored state that already has the wanted form is left alone (a look at one entry decides:
    a state's entries all have one form). Entering TTL, values get ``now`` as last access.
    """
    form: bool | None = None
    any_value = getattr(table, "any_value", None)  # a store's table: one read, not a whole scan
    if callable(any_value):
        sample = any_value()
        if sample is not None:
            form = is_ttl_stored(kind, namespaced, sample)
    if form is None:
        for stored in table.values():
            form = is_ttl_stored(kind, namespaced, stored)
            if form is not None:
                break
    if form is None or form == to_ttl:
        return False
    for key in list(table):
        stored = table[key]
        if namespaced:
            table[key] = {ns: _convert_cell(kind, cell, to_ttl, now) for ns, cell in stored.items()}
        else:
            table[key] = _convert_cell(kind, stored, to_ttl, now)
    return True


_NEVER = 1 << 62
"""A timestamp later than any clock reading (milliseconds)."""


class IncrementalCleanup:
    """Flink's ``TtlIncrementalCleanup`` on the heap: each state access checks a few more keys.

    Keeps a list of the table's keys and a position in it; every :meth:`step` purges the next
    ``size`` keys and, at the end of the list, takes a fresh copy of the keys (so every key is
    checked once per ``len(table) / size`` accesses, at O(size) amortised cost per access).

    A list is skipped while its first element is unexpired: elements are appended in time order
    (``add``, ``add_all``; ``update`` and update-on-read stamp them all alike), so an unexpired
    head means nothing expired, except after a merge of windows, where the cleanup may come late.
    Reads check every element anyway, so this only delays cleanup, never shows expired values.
    """

    __slots__ = (
        "_entries",
        "_head_only",
        "_keys",
        "_pos",
        "_purge",
        "_resume_at",
        "_round_oldest",
        "_round_start",
        "_single",
        "_size",
        "_table",
        "_tracks",
        "_ttl",
    )

    def __init__(
        self,
        table: MutableMapping[Any, Any],
        kind: str,
        namespaced: bool,
        ttl_ms: int,
        size: int,
    ) -> None:
        self._table = table
        self._purge = purger(kind, namespaced, ttl_ms)
        self._single = not namespaced and kind not in ("list", "map")
        self._head_only = not namespaced and kind == "list"
        self._entries = not namespaced and kind == "map"
        self._tracks = not namespaced
        """Whether rounds track their oldest timestamp (per-window states do not: fewer, nested)."""
        self._ttl = ttl_ms
        self._size = size
        self._keys: list[Any] = []
        self._pos = 0
        self._round_start: int | None = None
        self._round_oldest = _NEVER
        self._resume_at = -_NEVER
        """Before this time nothing can have expired: steps do nothing (see :meth:`step`)."""

    def step(self, now: int) -> None:
        """Check the next keys; ``now`` is the state access's own clock reading.

        A round over all keys that started at ``S`` and found ``O`` as the oldest timestamp of
        what it kept leaves nothing older than ``min(O, S)`` (later writes are newer than ``S``),
        so nothing expires before ``min(O, S) + ttl``: until then steps return at once. With a
        TTL much longer than a round, the cleanup costs next to nothing between rounds.
        """
        if now < self._resume_at:
            return
        pos = self._pos
        keys = self._keys
        ttl = self._ttl
        if pos >= len(keys):
            if self._tracks and self._round_start is not None:
                self._resume_at = min(self._round_oldest, self._round_start) + ttl
                self._round_start = None
                if now < self._resume_at:
                    return
            keys = self._keys = list(self._table)
            pos = 0
            self._round_start = now
            self._round_oldest = _NEVER
            if not keys:
                return
        table = self._table
        end = pos + self._size
        self._pos = end
        oldest = self._round_oldest
        if self._single:
            for key in keys[pos:end]:
                tv = table.get(key)
                if tv is None:
                    continue
                ts = tv.last_access_timestamp
                if ts + ttl <= now:
                    del table[key]
                elif ts < oldest:
                    oldest = ts
            self._round_oldest = oldest
            return
        purge = self._purge
        head_only = self._head_only
        entries = self._entries
        for key in keys[pos:end]:
            stored = table.get(key)
            if stored is None:
                continue
            if head_only:
                ts = stored[0].last_access_timestamp
                if ts + ttl > now:
                    if ts < oldest:
                        oldest = ts
                    continue
            left = purge(stored, now)
            if left is None:
                del table[key]
                continue
            if left is not stored:
                table[key] = left
            if head_only:
                ts = left[0].last_access_timestamp
            elif entries:
                ts = min(tv.last_access_timestamp for tv in left.values())
            else:
                continue
            if ts < oldest:
                oldest = ts
        self._round_oldest = oldest
