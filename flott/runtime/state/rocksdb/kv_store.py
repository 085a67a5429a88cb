"""The embedded key-value store under the large-state backend: RocksDB through ``rocksdict``.

The backend needs six operations of a store: point ``get``, an atomic ``write`` of a batch of
puts and deletes, an ordered ``scan`` of a key range, ``delete_range``, its size on disk, and
``close``. :class:`KVStore` names them, so the backend code (and the benchmark, which runs
the same backend over LMDB to compare) does not depend on one store's API.

RocksDB settings, and why:

* **No write-ahead log.** State is recovered from checkpoints, never from the working
  directory (which is deleted on dispose and never reopened), so logging writes twice would
  buy nothing. Flink's RocksDB backend disables the WAL for the same reason.
* **Bloom filters** (10 bits/key) on the table files and on the memtable: the first access
  to a key is a lookup of an absent key, which the filter answers without a search (measured:
  absent-key lookups in the memtable 3x faster).
* **LZ4 compression** where the build has it: state is pickles of Python objects, which
  compress well, and LZ4 costs little CPU.
* **Compaction style** from Flink's ``state.backend.rocksdb.compaction.style`` (LEVEL by
  default, as Flink). With incremental checkpoints and updates spread over all keys, LEVEL
  rewrites a whole level every few checkpoints (the next checkpoint uploads it again); UNIVERSAL
  leaves the big sorted run alone for much longer (bench/snapshot_phases.py measures both).
* **Block cache and write buffer sizes** from Flink's keys
  ``state.backend.rocksdb.block.cache-size`` (default 64 MiB here) and
  ``state.backend.rocksdb.writebuffer.size`` (default 64 MiB, as Flink).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any, Protocol

DEFAULT_BLOCK_CACHE_BYTES = 64 << 20
DEFAULT_WRITE_BUFFER_BYTES = 64 << 20
COMPACTION_STYLES = ("LEVEL", "UNIVERSAL", "FIFO")
"""Flink's ``state.backend.rocksdb.compaction.style`` values (LEVEL by default, as in Flink)."""


class KVStore(Protocol):
    """An ordered bytes -> bytes store owned by one backend (single thread)."""

    def get(self, key: bytes) -> bytes | None: ...

    def getter(self) -> Callable[[bytes], bytes | None]:
        """The fastest callable doing :meth:`get` (bound once by the hot path)."""
        ...

    def write(self, puts: list[tuple[bytes, bytes]], deletes: list[bytes]) -> None:
        """Apply ``deletes`` then ``puts`` atomically (a key is never in both)."""
        ...

    def scan(self, lower: bytes, upper: bytes | None) -> Iterator[tuple[bytes, bytes]]:
        """``(key, value)`` for ``lower <= key < upper`` (``upper`` None: to the end), in key order."""
        ...

    def delete_range(self, lower: bytes, upper: bytes | None) -> None: ...

    def disk_usage(self) -> int: ...

    def close(self) -> None: ...


def directory_size(path: str) -> int:
    """Bytes of the files under ``path`` (what a store occupies on disk)."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return total


class RocksDictStore:
    """:class:`KVStore` over a RocksDB database in ``path`` (created; raw bytes mode)."""

    def __init__(
        self,
        path: str,
        *,
        block_cache_bytes: int = DEFAULT_BLOCK_CACHE_BYTES,
        write_buffer_bytes: int = DEFAULT_WRITE_BUFFER_BYTES,
        compaction_style: str = "LEVEL",
    ) -> None:
        import rocksdict

        self._rocksdict = rocksdict
        self.path = path
        options = rocksdict.Options(raw_mode=True)
        options.create_if_missing(True)
        options.set_write_buffer_size(write_buffer_bytes)
        style = compaction_style.strip().upper()
        if style not in COMPACTION_STYLES:
            raise ValueError(f"unknown RocksDB compaction style {compaction_style!r} ({COMPACTION_STYLES})")
        options.set_compaction_style(getattr(rocksdict.DBCompactionStyle, style.lower())())
        # A Bloom filter over the memtable too: first lookups of new keys skip its skiplist search.
        options.set_memtable_prefix_bloom_ratio(0.1)
        options.set_memtable_whole_key_filtering(True)
        try:
            options.set_compression_type(rocksdict.DBCompressionType.lz4())
        except Exception:  # a build without LZ4 keeps RocksDB's default (Snappy)
            pass
        table = rocksdict.BlockBasedOptions()
        table.set_bloom_filter(10, False)
        table.set_block_cache(rocksdict.Cache(block_cache_bytes))
        options.set_block_based_table_factory(table)
        self._db = rocksdict.Rdict(path, options)
        write_options = rocksdict.WriteOptions()
        # A property at run time, though rocksdict's stub declares a method.
        write_options.disable_wal = True  # type: ignore[method-assign,assignment]
        self._db.set_write_options(write_options)

    def get(self, key: bytes) -> bytes | None:
        value: bytes | None = self._db.get(key)
        return value

    def getter(self) -> Callable[[bytes], bytes | None]:
        get: Callable[[bytes], bytes | None] = self._db.get
        return get

    def write(self, puts: list[tuple[bytes, bytes]], deletes: list[bytes]) -> None:
        if not deletes and len(puts) == 1:
            self._db.put(*puts[0])  # a batch of one costs a WriteBatch for nothing
            return
        if not puts and not deletes:
            return
        batch = self._rocksdict.WriteBatch(raw_mode=True)
        for key in deletes:
            batch.delete(key)
        for key, value in puts:
            batch.put(key, value)
        self._db.write(batch)

    def scan(self, lower: bytes, upper: bytes | None) -> Iterator[tuple[bytes, bytes]]:
        # Bounds are checked here: rocksdict's ReadOptions encode bounds in its non-raw key format.
        items: Any = self._db.items(from_key=lower)
        if upper is None:
            yield from items
            return
        for item in items:
            if item[0] >= upper:
                return
            yield item

    def delete_range(self, lower: bytes, upper: bytes | None) -> None:
        if upper is None:
            upper = b"\xff" * 16
        self._db.delete_range(lower, upper)

    def disk_usage(self) -> int:
        return directory_size(self.path)

    def flush(self) -> None:
        """Write the memtables to table files (so :meth:`disk_usage` counts everything)."""
        self._db.flush(True)

    def create_checkpoint(self, path: str) -> None:
        """A native checkpoint in ``path`` (must not exist): the memtable is flushed and the table
        files are hard-linked there, so it costs a flush, not a copy of the data."""
        self._rocksdict.Checkpoint(self._db).create_checkpoint(path)

    def close(self) -> None:
        self._db.close()


def scan_checkpoint(path: str) -> Iterator[tuple[bytes, bytes]]:
    """Every ``(key, value)`` of a native checkpoint directory (or a database restored from one),
    in key order, opened read-only; the database is closed when the iterator ends or is closed."""
    import rocksdict

    db = rocksdict.Rdict(path, rocksdict.Options(raw_mode=True), access_type=rocksdict.AccessType.read_only())
    try:
        items: Any = db.items()
        yield from items
    finally:
        db.close()
