"""One state's ``key -> value`` table in an embedded store, behind a bounded write-back cache.

Stored layout (one key space per backend, every state in it)::

    key   = key group (2 bytes, big endian) + state id (2 bytes, big endian) + canonical key bytes
    value = pickle((key, value), protocol 5)

The key-group prefix comes first, as in Flink's RocksDB backend: a checkpoint reads the
whole store in one ordered scan and gets its entries already grouped by key group, state by
state, and a key group's entries are one contiguous range (restoring or dropping one is a
range operation). The canonical key bytes (``key_groups.canonical_key_bytes``) are equal
for keys Python considers equal (``1``, ``1.0`` and ``True`` are one dict key; likewise for
tuples, Rows and sets of such), so the store addresses state as the heap backend's dicts do
(keys of other types are compared by their pickle); the original key object travels in the
value so snapshots and ``keys()`` return it unchanged. Keys and values must pickle.

**The write-back cache.** The state objects (shared with the heap backend) and the
operators' own code treat a table like a dict and change values *in place*: a window's
list grows by ``append``, a namespaced state's ``{namespace: value}`` dict is updated
through a reference obtained from ``get``. A store cannot see such changes, so the table
keeps every entry it hands out as a live object in an in-memory generation and writes it
back later. Two generations of at most ``cache_entries`` entries each:

* a lookup checks the young generation, then the old one (moving a hit to the young one),
  then the store (the loaded entry joins the young generation);
* when the young generation is full, the old one is written to the store in one batch and
  dropped, and the young one becomes old.

So an entry leaves memory only after a whole generation (``cache_entries`` other entries
touched) in which nobody looked it up, and what leaves is written first: in-place changes
made while a record is processed are never lost. (A reference kept across more than a
generation of other keys and changed later would be, which is Flink's RocksDB rule too:
call ``update()`` on state you changed.) Every cached entry counts as changed, because an
in-place change cannot be detected by reference; :meth:`StoreTable.flush` (a checkpoint calls it
through the backend) pickles all of them and writes those whose bytes differ from what the
store holds (an xxh3 fingerprint per cached entry), and keeps them cached.

Deletions are cached as a marker and become store deletes on write-back. Absent keys are
not cached: a lookup of a key the store does not have goes to the store each time (a Bloom
filter answers it).
"""

from __future__ import annotations

import pickle
import struct
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any

import xxhash

from flott.runtime.state.key_groups import canonical_key_bytes
from flott.runtime.state.rocksdb.kv_store import KVStore

_ABSENT: Any = object()
_DELETED: Any = object()
_PREFIX = struct.Struct(">HH")
_xxh3 = xxhash.xxh3_64_intdigest
_dumps = pickle.dumps
_loads = pickle.loads

DEFAULT_CACHE_ENTRIES = 20_000
"""Entries per cache generation and state (at most twice this many are cached)."""


def state_prefix(key_group: int, state_id: int) -> bytes:
    return _PREFIX.pack(key_group, state_id)


def next_prefix(prefix: bytes) -> bytes | None:
    """The smallest byte string greater than every string starting with ``prefix`` (None: none)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes([stripped[-1] + 1])


def split_store_key(store_key: bytes) -> tuple[int, int]:
    """``(key group, state id)`` of a stored key."""
    group, state_id = _PREFIX.unpack_from(store_key)
    return group, state_id


def key_encoder(state_id: int, max_parallelism: int) -> Callable[[Any], bytes]:
    """``key -> stored key`` of one state (key group from the same hash as ``assign_to_key_group``)."""
    # The prefix of each key group with the string tag: b"<group><state>S".
    str_prefixes = [_PREFIX.pack(group, state_id) + b"S" for group in range(max_parallelism)]
    prefixes = [_PREFIX.pack(group, state_id) for group in range(max_parallelism)]
    xxh3 = _xxh3
    canonical = canonical_key_bytes
    pack_len = struct.Struct("<I").pack

    def encode(key: Any) -> bytes:
        # The same bytes as canonical_key_bytes(key), and the key group of assign_to_key_group.
        if type(key) is str or isinstance(key, str):
            data = key.encode("utf-8", "surrogatepass")
            return str_prefixes[xxh3(data) % max_parallelism] + pack_len(len(data)) + data
        data = canonical(key)
        return prefixes[xxh3(data) % max_parallelism] + data

    return encode


class StoreTable(MutableMapping[Any, Any]):
    """A dict-like view of one state in a :class:`KVStore` (see the module docstring)."""

    def __init__(
        self,
        store: KVStore,
        state_id: int,
        max_parallelism: int,
        cache_entries: int = DEFAULT_CACHE_ENTRIES,
        name: str = "",
    ) -> None:
        if cache_entries < 1:
            raise ValueError(f"cache_entries must be at least 1, not {cache_entries}")
        self.name = name
        self._store = store
        self._get_raw = store.getter()
        self.state_id = state_id
        self._max_parallelism = max_parallelism
        self._encode = key_encoder(state_id, max_parallelism)
        self._limit = cache_entries
        self._young: dict[Any, Any] = {}
        self._old: dict[Any, Any] = {}
        self._stored: dict[Any, int] = {}
        """Cached key -> xxh3 of the bytes the store holds for it: a write-back skips an entry
        whose pickle did not change, so the store (and an incremental checkpoint's new table
        files) sees only what changed, not every entry that was looked at."""
        self._purge: Callable[[Any, int], Any] | None = None
        self._now: Callable[[], int] = lambda: 0

    # --- the hot path -----------------------------------------------------------------------

    def get(self, key: Any, default: Any = None) -> Any:
        value = self._young.get(key, _ABSENT)
        if value is _ABSENT:
            value = self._miss(key)
        if value is _ABSENT or value is _DELETED:
            return default
        return value

    def _miss(self, key: Any) -> Any:
        value = self._old.pop(key, _ABSENT)
        if value is _ABSENT:
            raw = self._get_raw(self._encode(key))
            if raw is None:
                return _ABSENT
            value = _loads(raw)[1]
            self._stored[key] = _xxh3(raw)
        young = self._young
        if len(young) >= self._limit:
            self._roll()
            young = self._young
        young[key] = value
        return value

    def __getitem__(self, key: Any) -> Any:
        value = self.get(key, _ABSENT)
        if value is _ABSENT:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return self.get(key, _ABSENT) is not _ABSENT

    def __setitem__(self, key: Any, value: Any) -> None:
        young = self._young
        if key not in young:
            if self._old:
                self._old.pop(key, None)
            if len(young) >= self._limit:
                self._roll()
                young = self._young
        young[key] = value

    def __delitem__(self, key: Any) -> None:
        if self.get(key, _ABSENT) is _ABSENT:
            raise KeyError(key)
        self._young[key] = _DELETED  # the lookup left the key in the young generation

    def pop(self, key: Any, default: Any = _ABSENT) -> Any:
        value = self.get(key, _ABSENT)
        if value is _ABSENT:
            if default is _ABSENT:
                raise KeyError(key)
            return default
        self._young[key] = _DELETED
        return value

    # --- write-back ---------------------------------------------------------------------------

    def _write(self, entries: Mapping[Any, Any], keep: bool) -> None:
        """Write back ``entries`` whose bytes changed; ``keep``: they stay cached (remember what
        the store now holds), else they leave the cache (forget it)."""
        encode = self._encode
        stored = self._stored
        puts: list[tuple[bytes, bytes]] = []
        deletes: list[bytes] = []
        for key, value in entries.items():
            if value is _DELETED:
                deletes.append(encode(key))
                stored.pop(key, None)
                continue
            try:
                data = _dumps((key, value), 5)
                fingerprint = _xxh3(data)
                if stored.get(key) != fingerprint:
                    puts.append((encode(key), data))
                if keep:
                    stored[key] = fingerprint
                else:
                    stored.pop(key, None)
            except Exception as e:
                raise TypeError(
                    f"state '{self.name}' holds a key or value that cannot be pickled, which the RocksDB "
                    f"state backend needs (key {key!r}): {e}"
                ) from e
        self._store.write(puts, deletes)

    def _roll(self) -> None:
        """The young generation is full: write back and drop the old one; the young one ages."""
        if self._old:
            if self._purge is not None:
                self._purge_old()
            self._write(self._old, keep=False)
        self._old = self._young
        self._young = {}

    def set_write_back_purge(self, purge: Callable[[Any, int], Any], now: Callable[[], int]) -> None:
        """Drop expired TTL state from entries as they leave the cache (``flott.runtime.state.ttl``).

        ``purge(value, now)`` returns the value without its expired parts (None: nothing left). Only
        entries leaving memory are purged: nobody holds them any more, so replacing them is safe.
        """
        self._purge = purge
        self._now = now

    def _purge_old(self) -> None:
        assert self._purge is not None
        purge = self._purge
        now = self._now()
        old = self._old
        for key, value in old.items():
            if value is _DELETED:
                continue
            left = purge(value, now)
            if left is not value:
                old[key] = _DELETED if left is None else left

    def flush(self) -> None:
        """Write every cached entry to the store; live entries stay cached (deletions are done)."""
        if not self._young and not self._old:
            return
        self._write({**self._old, **self._young}, keep=True)
        for generation in (self._old, self._young):
            for key in [k for k, v in generation.items() if v is _DELETED]:
                del generation[key]

    def drop_cache(self) -> None:
        """Forget cached entries without writing them (after :meth:`flush`, or to discard)."""
        self._young = {}
        self._old = {}
        self._stored = {}

    @property
    def cached_entries(self) -> int:
        return len(self._young) + len(self._old)

    # --- whole-table operations (flush first, then read the store) -----------------------------

    def _ranges(self) -> Iterator[tuple[bytes, bytes | None]]:
        for group in range(self._max_parallelism):
            prefix = state_prefix(group, self.state_id)
            yield prefix, next_prefix(prefix)

    def _scan(self) -> Iterator[tuple[Any, Any]]:
        self.flush()
        scan = self._store.scan
        for lower, upper in self._ranges():
            for _, raw in scan(lower, upper):
                yield _loads(raw)

    def items_by_key_group(self, key_group: int) -> Iterator[tuple[Any, Any]]:
        """``(key, value)`` of one key group (flushes first)."""
        self.flush()
        prefix = state_prefix(key_group, self.state_id)
        for _, raw in self._store.scan(prefix, next_prefix(prefix)):
            yield _loads(raw)

    def any_value(self) -> Any:
        """One stored value of this state (None: it has none), without scanning the others."""
        self.flush()
        scan = self._store.scan
        for lower, upper in self._ranges():
            for _, raw in scan(lower, upper):
                return _loads(raw)[1]
        return None

    def __iter__(self) -> Iterator[Any]:
        return iter([key for key, _ in self._scan()])

    def snapshot_items(self) -> list[tuple[Any, Any]]:
        """Every ``(key, value)`` (flushes first; reads the whole state into memory)."""
        return list(self._scan())

    def __len__(self) -> int:
        self.flush()
        scan = self._store.scan
        return sum(1 for lower, upper in self._ranges() for _ in scan(lower, upper))

    def bulk_load(self, entries: Mapping[Any, Any]) -> None:
        """Write ``entries`` straight to the store (a restore), replacing cached versions."""
        self.flush()
        self.drop_cache()
        self._write(entries, keep=False)

    def clear(self) -> None:
        self.drop_cache()
        for lower, upper in self._ranges():
            self._store.delete_range(lower, upper)
