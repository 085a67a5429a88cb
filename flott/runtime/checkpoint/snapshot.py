"""Task side of the snapshot format: write and read key-group files and operator-state files.

The files are canonical, i.e. independent of the state backend that wrote them: a key-group file
holds, per state name, the state kind and the ``(key, value)`` pairs of that key group (values as
the state's user-visible value: a list for ListState, a dict for MapState, the namespace dict for
namespaced states). Any backend (heap, an embedded store) writes and reads the same bytes.

File layout (both kinds)::

    4 bytes magic (b"FKG1" key group / b"FOS1" operator state)
    2 bytes format version, little endian
    8 bytes xxh3-64 of the payload, little endian
    payload: pickle protocol 5

The checksum turns a truncated or corrupted file into a :class:`SnapshotFormatError` instead of a
confusing unpickling error. These files hold user objects, so only TaskExecutors read them.
"""

from __future__ import annotations

import pickle
import struct
from collections.abc import Iterable, Mapping
from typing import Any

import xxhash

from flott.runtime.checkpoint.errors import SnapshotFormatError
from flott.runtime.checkpoint.metadata import (
    FORMAT_VERSION,
    SPLIT_DISTRIBUTE,
    SUPPORTED_FORMAT_VERSIONS,
    UNION,
    KeyGroupStateHandle,
    OperatorListStateInfo,
    OperatorStateHandle,
    OperatorSubtaskState,
)
from flott.runtime.checkpoint.storage import CheckpointStorage, join
from flott.runtime.state.key_groups import assign_to_key_group

_KG_MAGIC = b"FKG1"
_OS_MAGIC = b"FOS1"
_HEADER = struct.Struct("<4sHQ")


def _frame(magic: bytes, payload: bytes) -> bytes:
    return _HEADER.pack(magic, FORMAT_VERSION, xxhash.xxh3_64_intdigest(payload)) + payload


def _unframe(magic: bytes, data: bytes, where: str) -> Any:
    if len(data) < _HEADER.size:
        raise SnapshotFormatError(f"corrupt state file {where}: truncated header")
    got_magic, version, checksum = _HEADER.unpack_from(data)
    if got_magic != magic:
        raise SnapshotFormatError(f"corrupt state file {where}: bad magic {got_magic!r}")
    if version not in SUPPORTED_FORMAT_VERSIONS:
        raise SnapshotFormatError(f"state file {where} has unsupported format version {version}")
    payload = data[_HEADER.size :]
    if xxhash.xxh3_64_intdigest(payload) != checksum:
        raise SnapshotFormatError(f"corrupt state file {where}: checksum mismatch")
    return pickle.loads(payload)


def operator_dir(operator_id: str) -> str:
    return f"op-{operator_id}"


def key_group_file(operator_id: str, key_group: int) -> str:
    return f"{operator_dir(operator_id)}/kg-{key_group:05d}.bin"


def operator_state_file(operator_id: str, subtask_index: int) -> str:
    return f"{operator_dir(operator_id)}/os-{subtask_index:05d}.bin"


# -- keyed state ------------------------------------------------------------------------------


def write_keyed_state(
    storage: CheckpointStorage,
    snapshot_dir: str,
    operator_id: str,
    states: Mapping[str, tuple[str, Mapping[int, Mapping[Any, Any]]]],
) -> list[KeyGroupStateHandle]:
    """Write ``{state name: (kind, {key group: {key: value}})}`` as one file per non-empty key group."""
    per_group: dict[int, dict[str, dict[str, Any]]] = {}
    for name, (kind, by_group) in states.items():
        for group, entries in by_group.items():
            if entries:
                per_group.setdefault(group, {})[name] = {"kind": kind, "entries": list(entries.items())}
    handles = []
    for group in sorted(per_group):
        rel = key_group_file(operator_id, group)
        data = _frame(_KG_MAGIC, pickle.dumps(per_group[group], protocol=5))
        storage.write_atomic(join(snapshot_dir, rel), data)
        counts = {name: len(s["entries"]) for name, s in per_group[group].items()}
        handles.append(KeyGroupStateHandle(key_group=group, path=rel, size=len(data), entries=counts))
    return handles


def read_key_group(storage: CheckpointStorage, path: str) -> dict[str, tuple[str, dict[Any, Any]]]:
    """One key-group file -> ``{state name: (kind, {key: value})}``."""
    raw = _unframe(_KG_MAGIC, storage.read(path), path)
    return {name: (s["kind"], dict(s["entries"])) for name, s in raw.items()}


# -- operator (non-keyed) state ---------------------------------------------------------------


def write_operator_state(
    storage: CheckpointStorage,
    snapshot_dir: str,
    operator_id: str,
    subtask_index: int,
    states: Mapping[str, tuple[str, Iterable[Any]]],
) -> OperatorStateHandle:
    """Write ``{state name: (mode, elements)}`` (mode SPLIT_DISTRIBUTE or UNION) for one subtask."""
    payload: dict[str, list[Any]] = {}
    infos: dict[str, OperatorListStateInfo] = {}
    for name, (mode, elements) in states.items():
        if mode not in (SPLIT_DISTRIBUTE, UNION):
            raise ValueError(f"unknown operator state mode {mode!r}")
        payload[name] = list(elements)
        infos[name] = OperatorListStateInfo(mode=mode, count=len(payload[name]))
    rel = operator_state_file(operator_id, subtask_index)
    data = _frame(_OS_MAGIC, pickle.dumps(payload, protocol=5))
    storage.write_atomic(join(snapshot_dir, rel), data)
    return OperatorStateHandle(subtask_index=subtask_index, path=rel, size=len(data), states=infos)


def read_operator_state(storage: CheckpointStorage, path: str) -> dict[str, list[Any]]:
    raw: dict[str, list[Any]] = _unframe(_OS_MAGIC, storage.read(path), path)
    return raw


# -- the heap backend -------------------------------------------------------------------------


def snapshot_heap_backend(
    storage: CheckpointStorage,
    snapshot_dir: str,
    backend: Any,
    *,
    operator_id: str,
    subtask_index: int,
    parallelism: int,
    uid: str | None = None,
    name: str = "",
    operator_states: Mapping[str, tuple[str, Iterable[Any]]] | None = None,
) -> OperatorSubtaskState:
    """Snapshot a :class:`HeapKeyedStateBackend` (and optional operator list states) of one subtask."""
    states = {
        state: (str(backend.state_kind(state)), backend.entries_by_key_group(state))
        for state in backend.state_names()
    }
    handles = write_keyed_state(storage, snapshot_dir, operator_id, states)
    kgr = backend.key_group_range
    op_handle = None
    if operator_states:
        op_handle = write_operator_state(storage, snapshot_dir, operator_id, subtask_index, operator_states)
    return OperatorSubtaskState(
        operator_id=operator_id,
        subtask_index=subtask_index,
        parallelism=parallelism,
        max_parallelism=backend.max_parallelism,
        uid=uid,
        name=name,
        key_group_range=(kgr.start_key_group, kgr.end_key_group),
        keyed_state_kinds={s: k for s, (k, _) in states.items()},
        key_groups=handles,
        operator_state=op_handle,
    )


def restore_heap_backend(storage: CheckpointStorage, backend: Any, key_group_files: Iterable[str]) -> int:
    """Load key-group files (absolute paths, from a :class:`SubtaskRestore`) into a heap backend.

    Returns the number of entries restored. Refuses key groups outside the backend's range.
    """
    restored = 0
    for path in key_group_files:
        for state, (kind, entries) in read_key_group(storage, path).items():
            for key in entries:
                group = assign_to_key_group(key, backend.max_parallelism)
                if group not in backend.key_group_range:
                    raise SnapshotFormatError(
                        f"state file {path} holds key group {group}, outside {backend.key_group_range}"
                    )
            backend.restore_entries(state, kind, entries)
            restored += len(entries)
    return restored
