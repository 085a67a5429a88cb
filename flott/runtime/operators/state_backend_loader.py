"""Which keyed state backend a job's operators get (Flink's ``StateBackendLoader``).

It lives with the operators, above ``flott.runtime.state`` and both backends, because it names
the concrete backends: in ``flott.runtime.state`` it would close a loop with ``state.heap`` and
``state.rocksdb``, which build on that package's contracts.

Configuration keys (Flink's names where Flink has the concept):

``state.backend.type``
    ``hashmap`` (default): state as Python objects in dicts
    (:class:`~flott.runtime.state.heap.HeapKeyedStateBackend`). ``rocksdb``: state in an
    embedded RocksDB per operator and subtask, for state larger than memory
    (:class:`~flott.runtime.state.rocksdb.RocksDBKeyedStateBackend`). Case-insensitive.
    Flink's legacy names ``jobmanager`` and ``filesystem`` mean ``hashmap``, as in Flink; the
    deprecated key ``state.backend`` is read when ``state.backend.type`` is absent. Anything
    else is a :class:`ConfigurationError` naming the key.
``state.backend.rocksdb.localdir``
    Where RocksDB working directories go (several, ``,``-separated: round robin by subtask);
    else ``io.tmp.dirs`` (separated by ``,``, ``;`` or ``:``); else the system temp directory.
    Each backend makes a fresh directory inside and deletes it on ``dispose()``.
``state.backend.rocksdb.block.cache-size`` / ``state.backend.rocksdb.writebuffer.size``
    RocksDB's block cache and memtable sizes (memory sizes: ``64mb``, ``1 gb``, bytes).
``state.backend.rocksdb.object-cache.entries`` (flott's own)
    Deserialized entries each state keeps live in front of RocksDB, per cache generation
    (``store_table``; default 20000). More is faster for a hot key set, costs memory.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from flott.configuration import parse_memory_size
from flott.errors import ConfigurationError
from flott.runtime.state.backend import KeyedStateBackend
from flott.runtime.state.heap import HeapKeyedStateBackend
from flott.runtime.state.key_groups import KeyGroupRange

if TYPE_CHECKING:
    from flott.runtime.state.rocksdb import RocksDBKeyedStateBackend

    def _both_satisfy_the_protocol(
        heap: HeapKeyedStateBackend, rocksdb: RocksDBKeyedStateBackend
    ) -> list[KeyedStateBackend]:
        return [heap, rocksdb]  # mypy checks both against KeyedStateBackend here


STATE_BACKEND_TYPE = "state.backend.type"
LEGACY_STATE_BACKEND = "state.backend"
ROCKSDB_LOCAL_DIR = "state.backend.rocksdb.localdir"
IO_TMP_DIRS = "io.tmp.dirs"
ROCKSDB_BLOCK_CACHE_SIZE = "state.backend.rocksdb.block.cache-size"
ROCKSDB_WRITE_BUFFER_SIZE = "state.backend.rocksdb.writebuffer.size"
ROCKSDB_OBJECT_CACHE_ENTRIES = "state.backend.rocksdb.object-cache.entries"
ROCKSDB_COMPACTION_STYLE = "state.backend.rocksdb.compaction.style"

HASHMAP = "hashmap"
ROCKSDB = "rocksdb"
_ALIASES = {
    "hashmap": HASHMAP,
    "jobmanager": HASHMAP,
    "filesystem": HASHMAP,
    "heap": HASHMAP,
    "rocksdb": ROCKSDB,
}
ACCEPTED_BACKEND_TYPES = tuple(sorted(_ALIASES))

def _positive_int(key: str, value: str) -> int:
    try:
        number = int(value.strip())
    except ValueError:
        number = 0
    if number < 1:
        raise ConfigurationError(f"Could not parse value '{value}' for key '{key}' as a positive integer")
    return number


def state_backend_type(job_config: Mapping[str, str]) -> str:
    """The normalised backend name (``hashmap`` or ``rocksdb``) the configuration asks for."""
    key = STATE_BACKEND_TYPE if STATE_BACKEND_TYPE in job_config else LEGACY_STATE_BACKEND
    raw = job_config.get(key)
    if raw is None or not str(raw).strip():
        return HASHMAP
    name = _ALIASES.get(str(raw).strip().lower())
    if name is None:
        raise ConfigurationError(
            f"Unknown state backend '{raw}' for key '{key}'; "
            f"accepted values: {', '.join(ACCEPTED_BACKEND_TYPES)}"
        )
    return name


def rocksdb_local_dir(job_config: Mapping[str, str], subtask_index: int = 0) -> str | None:
    """The base directory of a RocksDB working directory (None: the system temp directory).

    Several directories (``,``/``;``-separated; ``io.tmp.dirs`` also ``:``) are used round robin
    by subtask index, spreading subtasks over disks as Flink does.
    """
    for key, separators in ((ROCKSDB_LOCAL_DIR, r"[,;]"), (IO_TMP_DIRS, r"[,;:]")):
        candidates = [c.strip() for c in re.split(separators, job_config.get(key, "")) if c.strip()]
        if candidates:
            return candidates[subtask_index % len(candidates)]
    return None


def create_keyed_state_backend(
    job_config: Mapping[str, str],
    max_parallelism: int,
    key_group_range: KeyGroupRange,
    *,
    operator_id: str,
    subtask_index: int,
) -> KeyedStateBackend:
    """A new, empty keyed state backend for one operator of one subtask, as configured.

    The caller owns it: call ``dispose()`` when the operator is done (for RocksDB that deletes
    its working directory), and restore into it with ``restore_keyed_backend`` before use.
    """
    kind = state_backend_type(job_config)
    if kind == HASHMAP:
        return HeapKeyedStateBackend(max_parallelism, key_group_range)
    # deferred: rocksdict's native library, ~20 ms of every task's start-up on the default heap backend
    from flott.runtime.state.rocksdb import RocksDBKeyedStateBackend
    from flott.runtime.state.rocksdb.kv_store import (
        COMPACTION_STYLES,
        DEFAULT_BLOCK_CACHE_BYTES,
        DEFAULT_WRITE_BUFFER_BYTES,
    )
    from flott.runtime.state.rocksdb.store_table import DEFAULT_CACHE_ENTRIES

    block_cache = job_config.get(ROCKSDB_BLOCK_CACHE_SIZE)
    write_buffer = job_config.get(ROCKSDB_WRITE_BUFFER_SIZE)
    cache_entries = job_config.get(ROCKSDB_OBJECT_CACHE_ENTRIES)
    style = str(job_config.get(ROCKSDB_COMPACTION_STYLE, "LEVEL")).strip().upper()
    if style not in COMPACTION_STYLES:
        raise ConfigurationError(
            f"Could not parse value '{style}' for key '{ROCKSDB_COMPACTION_STYLE}' "
            f"(expected one of {', '.join(COMPACTION_STYLES)})"
        )
    return RocksDBKeyedStateBackend(
        max_parallelism,
        key_group_range,
        local_dir=rocksdb_local_dir(job_config, subtask_index),
        operator_id=operator_id,
        subtask_index=subtask_index,
        cache_entries=(
            DEFAULT_CACHE_ENTRIES
            if cache_entries is None
            else _positive_int(ROCKSDB_OBJECT_CACHE_ENTRIES, cache_entries)
        ),
        block_cache_bytes=(
            DEFAULT_BLOCK_CACHE_BYTES
            if block_cache is None
            else parse_memory_size(ROCKSDB_BLOCK_CACHE_SIZE, block_cache)
        ),
        write_buffer_bytes=(
            DEFAULT_WRITE_BUFFER_BYTES
            if write_buffer is None
            else parse_memory_size(ROCKSDB_WRITE_BUFFER_SIZE, write_buffer)
        ),
        compaction_style=style,
    )
