"""Keyed state in an embedded RocksDB (Flink's ``EmbeddedRocksDBStateBackend``, ``state.backend.type:
rocksdb``): for state larger than memory.

Same interface and same state semantics as the heap backend (both are a
:class:`~flott.runtime.state.heap.table_backend.TableKeyedStateBackend`; the state objects are
shared), so jobs compute the same results and snapshots are the same canonical files. Only the
tables differ: here each is a :class:`~flott.runtime.state.rocksdb.store_table.StoreTable`,
entries pickled in one RocksDB key space under a key-group prefix, with a bounded write-back
cache of live objects in front (its module docstring says why and how it stays correct when
operators change values in place).

**Timers stay in memory** (:class:`HeapTimerQueue`, like Flink's
``state.backend.rocksdb.timer-service.factory: HEAP``): a timer service polls the earliest timer
on every watermark and registers one on nearly every element, and a deduplicated
timestamp-ordered queue in the store would cost a store seek, a pickle and a write per
registration where the heap queue costs a dict insert. Timers are few next to state (about
one per key and window, each a small tuple), they go into checkpoints with the state, per key
group, and they are restored from there.

**The working directory** is a fresh directory under ``local_dir`` (the loader passes
``state.backend.rocksdb.localdir``, else the first of ``io.tmp.dirs``, else the system temp
directory), named after the operator and subtask. It holds nothing a restart could use (state
comes back from checkpoints), so :meth:`RocksDBKeyedStateBackend.dispose` deletes it, and a
finalizer does too if a backend is dropped without ``dispose()``. A process that is killed
(SIGKILL, OOM) runs neither, so the directory name carries the owning process id and the first
backend a process opens under a base directory deletes the directories of processes that are
gone (:func:`sweep_orphaned_working_dirs`): a TaskExecutor that replaces a killed one cleans up
after it instead of letting the disk fill with dead stores.
"""

from __future__ import annotations

import os
import pickle
import re
import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import Any, cast

from flott.runtime.state.backend import StateKind
from flott.runtime.state.heap.table_backend import TableKeyedStateBackend
from flott.runtime.state.key_groups import KeyGroupRange
from flott.runtime.state.rocksdb.kv_store import (
    DEFAULT_BLOCK_CACHE_BYTES,
    DEFAULT_WRITE_BUFFER_BYTES,
    KVStore,
    RocksDictStore,
    scan_checkpoint,
)
from flott.runtime.state.rocksdb.store_table import (
    DEFAULT_CACHE_ENTRIES,
    StoreTable,
    split_store_key,
)
from flott.runtime.state.ttl import TtlPolicy, purger

_MAX_STATES = 0xFFFF
_loads = pickle.loads


_WORKING_DIR_PREFIX = "flott-rocksdb-"
_OWNED_BY = re.compile(r"^flott-rocksdb-(\d+)-")
_swept_bases: set[str] = set()


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def sweep_orphaned_working_dirs(base: str) -> list[str]:
    """Delete the working directories under ``base`` whose owning process no longer exists.

    Returns the directories deleted. Directories of live processes (this one included) and
    anything not named like a working directory are left alone.
    """
    removed: list[str] = []
    try:
        names = os.listdir(base)
    except OSError:
        return removed
    for name in names:
        match = _OWNED_BY.match(name)
        if match is None:
            continue
        pid = int(match.group(1))
        if pid == os.getpid() or _process_alive(pid):
            continue
        path = os.path.join(base, name)
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def group_store_entries(
    items: Iterable[tuple[bytes, bytes]], names: dict[int, str], key_groups: KeyGroupRange | None = None
) -> Iterator[tuple[int, dict[str, dict[Any, Any]]]]:
    """Stored ``(key, value)`` pairs in key order -> ``(key group, {state: {key: value}})``, one key
    group at a time (only key groups in ``key_groups``, if given). States of ids not in ``names``
    are skipped."""
    current_group = -1
    current: dict[str, dict[Any, Any]] = {}
    for store_key, raw in items:
        group, state_id = split_store_key(store_key)
        if group != current_group:
            if current:
                yield current_group, current
            current_group, current = group, {}
        if key_groups is not None and group not in key_groups:
            continue
        name = names.get(state_id)
        if name is None:
            continue
        key, value = _loads(raw)
        entries = current.get(name)
        if entries is None:
            entries = current[name] = {}
        entries[key] = value
    if current:
        yield current_group, current


def scan_native_checkpoint(
    path: str, names: dict[int, str], key_groups: KeyGroupRange | None = None
) -> Iterator[tuple[int, dict[str, dict[Any, Any]]]]:
    """A native checkpoint's (or a downloaded incremental checkpoint's) state per key group."""
    return group_store_entries(scan_checkpoint(path), names, key_groups)


def _cleanup(store: KVStore, working_dir: str) -> None:
    try:
        store.close()
    finally:
        shutil.rmtree(working_dir, ignore_errors=True)


class RocksDBKeyedStateBackend(TableKeyedStateBackend):
    """The keyed state of one operator in one subtask, in a private RocksDB instance."""

    backend_type = "rocksdb"

    def __init__(
        self,
        max_parallelism: int,
        key_group_range: KeyGroupRange,
        *,
        local_dir: str | None = None,
        operator_id: str = "",
        subtask_index: int = 0,
        cache_entries: int = DEFAULT_CACHE_ENTRIES,
        block_cache_bytes: int = DEFAULT_BLOCK_CACHE_BYTES,
        write_buffer_bytes: int = DEFAULT_WRITE_BUFFER_BYTES,
        compaction_style: str = "LEVEL",
        store_factory: Callable[[str], KVStore] | None = None,
        ttl_time_provider: Callable[[], int] | None = None,
    ) -> None:
        super().__init__(max_parallelism, key_group_range, ttl_time_provider)
        base = local_dir or tempfile.gettempdir()
        os.makedirs(base, exist_ok=True)
        if base not in _swept_bases:
            _swept_bases.add(base)
            sweep_orphaned_working_dirs(base)
        label = re.sub(r"[^A-Za-z0-9_.-]", "_", operator_id)[:64] or "op"
        self.working_dir = tempfile.mkdtemp(
            prefix=f"{_WORKING_DIR_PREFIX}{os.getpid()}-{label}-{subtask_index}-", dir=base
        )
        """Where the store lives; deleted by :meth:`dispose`."""
        try:
            path = os.path.join(self.working_dir, "db")
            if store_factory is None:
                self._store: KVStore = RocksDictStore(
                    path,
                    block_cache_bytes=block_cache_bytes,
                    write_buffer_bytes=write_buffer_bytes,
                    compaction_style=compaction_style,
                )
            else:
                self._store = store_factory(path)
        except BaseException:
            shutil.rmtree(self.working_dir, ignore_errors=True)
            raise
        self._cache_entries = cache_entries
        self._finalizer = weakref.finalize(self, _cleanup, self._store, self.working_dir)
        self._disposed = False
        self._checkpoints_taken = 0

    # --- tables -----------------------------------------------------------------------------

    def _new_table(self, name: str, kind: StateKind) -> StoreTable:
        if self._disposed:
            raise RuntimeError("the state backend is disposed")
        state_id = len(self._tables)
        if state_id > _MAX_STATES:
            raise ValueError(f"too many states in one operator (at most {_MAX_STATES + 1})")
        return StoreTable(self._store, state_id, self.max_parallelism, self._cache_entries, name)

    def _register(
        self,
        name: str,
        kind: StateKind,
        namespaced: bool,
        policy: TtlPolicy | None,
        table: MutableMapping[Any, Any],
    ) -> None:
        """As the base; a TTL state with background cleanup also sheds expired values on write-back."""
        super()._register(name, kind, namespaced, policy, table)
        if policy is not None and policy.cleanup_on_store_scan:
            cast(StoreTable, table).set_write_back_purge(
                purger(kind, namespaced, policy.ttl_ms), self._ttl_now
            )

    def _store_tables(self) -> dict[str, StoreTable]:
        return cast(dict[str, StoreTable], self._tables)

    def flush(self) -> None:
        """Write every cached entry of every state to the store."""
        for table in self._store_tables().values():
            table.flush()

    @property
    def store(self) -> KVStore:
        return self._store

    def disk_usage(self) -> int:
        """Bytes the store occupies in :attr:`working_dir`."""
        return self._store.disk_usage()

    # --- snapshots and restore ----------------------------------------------------------------

    def entries_by_key_group(self, name: str) -> dict[int, dict[Any, Any]]:
        """State ``name`` split per key group (reads it all into memory: for tests and tools)."""
        table = self._store_tables().get(name)
        out: dict[int, dict[Any, Any]] = {}
        if table is None:
            return out
        for group in range(self.max_parallelism):
            entries = dict(table.items_by_key_group(group))
            if entries:
                out[group] = entries
        return out

    def _scan_key_group_entries(self) -> Iterator[tuple[int, dict[str, dict[Any, Any]]]]:
        """Every state of one key group at a time, ascending: one ordered scan of the store.

        Only one key group's entries are in memory at once, so a checkpoint of state larger than
        memory works. The store must not change while the iterator is consumed.
        """
        self.flush()
        names = {table.state_id: name for name, table in self._store_tables().items()}
        return group_store_entries(self._store.scan(b"", None), names)

    def native_checkpoint(self) -> tuple[str, dict[int, str]]:
        """A RocksDB native checkpoint of the state as of now (the write-back caches flushed
        first) in a fresh directory under :attr:`working_dir`, and the state names by state id.

        Hard links, not copies: what the synchronous part of a checkpoint takes. The directory
        is the caller's to delete (:func:`shutil.rmtree`) once it has read or uploaded it.
        """
        if not isinstance(self._store, RocksDictStore):
            raise TypeError("native checkpoints need the RocksDB store")
        self.flush()
        self._checkpoints_taken += 1
        path = os.path.join(self.working_dir, f"chk-{self._checkpoints_taken}")
        self._store.create_checkpoint(path)
        return path, {table.state_id: name for name, table in self._store_tables().items()}

    def capture_key_group_entries(
        self,
    ) -> tuple[Iterable[tuple[int, dict[str, dict[Any, Any]]]], Callable[[], None]]:
        """The synchronous part of a full checkpoint: a native checkpoint, read on the writer's
        thread (:func:`scan_native_checkpoint`), and what deletes it. TTL states cleaned up in
        snapshots (and a store other than RocksDB) are read now instead."""
        if self._snapshot_purges or not isinstance(self._store, RocksDictStore):
            return list(self.iter_key_group_entries()), lambda: None
        path, names = self.native_checkpoint()
        return scan_native_checkpoint(path, names), lambda: shutil.rmtree(path, ignore_errors=True)

    def restore_entries(self, name: str, kind: StateKind, entries: dict[Any, Any]) -> None:
        """Write restored ``key -> value`` entries of state ``name`` straight to the store."""
        self._prepare_restore(name, kind, entries)
        table = cast(StoreTable, self._table(name, kind))
        table.bulk_load(entries)

    # --- lifecycle ------------------------------------------------------------------------------

    def dispose(self) -> None:
        """Close the store and delete its working directory. Idempotent."""
        if self._disposed:
            return
        self._disposed = True
        for table in self._store_tables().values():
            table.drop_cache()
        for queue in self._timer_queues.values():
            queue.clear()
        self._states.clear()
        self._forget_ttl()
        self.current_key = None
        self.current_namespace = None
        self._finalizer()
