"""Task side of the snapshot format: write and read key-group files and operator-state files.

The files are canonical, i.e. independent of the state backend that wrote them: a key-group file
holds, per state name, the state kind and the ``(key, value)`` pairs of that key group (values as
the state's user-visible value: a list for ListState, a dict for MapState, the namespace dict for
namespaced states). Any backend (heap, an embedded store) writes and reads the same bytes:
:func:`snapshot_keyed_backend` and :func:`restore_keyed_backend` work on any
:class:`~flott.runtime.state.backend.KeyedStateBackend`. Timer queues are in the same files, as
state of kind ``"timer"`` (``{key: [(timestamp, namespace), ...]}``), so they are split per key
group and redistributed on rescale like any state.

Since format 2 a subtask's key-group blobs are concatenated in one file (``keyed-<i>.bin``),
each handle giving its blob's offset and size; format 1 wrote each blob as its own file
(``kg-<n>.bin``), and both are read.

Blob / file layout (both kinds)::

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
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

import xxhash

from flott.runtime.checkpoint.errors import CheckpointCancelledError, SnapshotFormatError
from flott.runtime.checkpoint.metadata import (
    BROADCAST,
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
from flott.runtime.state.backend import TIMER_KIND
from flott.runtime.state.heap.heap_snapshot import copy_table
from flott.runtime.state.key_groups import assign_to_key_group

if TYPE_CHECKING:
    from flott.runtime.state.backend import KeyedStateBackend, StateKind

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


def keyed_state_file(operator_id: str, subtask_index: int) -> str:
    """The file of one subtask's key groups, one framed blob each (format 2)."""
    return f"{operator_dir(operator_id)}/keyed-{subtask_index:05d}.bin"


def operator_state_file(operator_id: str, subtask_index: int) -> str:
    return f"{operator_dir(operator_id)}/os-{subtask_index:05d}.bin"


# -- keyed state ------------------------------------------------------------------------------


def write_key_group_file(
    storage: CheckpointStorage,
    snapshot_dir: str,
    operator_id: str,
    key_group: int,
    states: Mapping[str, tuple[str, Mapping[Any, Any]]],
) -> KeyGroupStateHandle:
    """Write one key group's ``{state name: (kind, {key: value})}`` as one file; returns its handle."""
    rel = key_group_file(operator_id, key_group)
    data, counts = encode_key_group(states)
    storage.write_atomic(join(snapshot_dir, rel), data)
    return KeyGroupStateHandle(key_group=key_group, path=rel, size=len(data), entries=counts)


def encode_key_group(states: Mapping[str, tuple[str, Mapping[Any, Any]]]) -> tuple[bytes, dict[str, int]]:
    """One key group's framed blob and its entry counts per state.

    ``entries`` is pickled as the ``{key: value}`` dict itself when it is one (no list of pairs
    made and memoized per key: a third of the pickling with a checkpoint every second); readers
    take either, through ``dict(entries)`` (files of earlier versions hold lists of pairs)."""
    payload = {
        name: {"kind": kind, "entries": entries if type(entries) is dict else list(entries.items())}
        for name, (kind, entries) in states.items()
        if entries
    }
    data = _frame(_KG_MAGIC, pickle.dumps(payload, protocol=5))
    return data, {name: len(state["entries"]) for name, state in payload.items()}


def write_keyed_state(
    storage: CheckpointStorage,
    snapshot_dir: str,
    operator_id: str,
    states: Mapping[str, tuple[str, Mapping[int, Mapping[Any, Any]]]],
) -> list[KeyGroupStateHandle]:
    """Write ``{state name: (kind, {key group: {key: value}})}`` as one file per non-empty key group."""
    per_group: dict[int, dict[str, tuple[str, Mapping[Any, Any]]]] = {}
    for name, (kind, by_group) in states.items():
        for group, entries in by_group.items():
            if entries:
                per_group.setdefault(group, {})[name] = (kind, entries)
    return [
        write_key_group_file(storage, snapshot_dir, operator_id, group, per_group[group])
        for group in sorted(per_group)
    ]


def read_key_group(
    storage: CheckpointStorage, path: str, offset: int = -1, size: int = 0, data: bytes | None = None
) -> dict[str, tuple[str, dict[Any, Any]]]:
    """One key group's blob -> ``{state name: (kind, {key: value})}``: the whole file ``path``
    (offset -1, format 1) or ``size`` bytes from ``offset`` of it (format 2); ``data`` is the
    file's bytes if read already.

    Timer queues are there too, with kind ``"timer"`` and ``{key: [(timestamp, namespace), ...]}``.
    """
    if data is None:
        data = storage.read(path)
    where = path
    if offset >= 0:
        where = f"{path} [{offset}, {offset + size})"
        if offset + size > len(data):
            raise SnapshotFormatError(f"corrupt state file {where}: the file has {len(data)} bytes")
        data = data[offset : offset + size]
    raw = _unframe(_KG_MAGIC, data, where)
    return {name: (s["kind"], dict(s["entries"])) for name, s in raw.items()}


# -- operator (non-keyed) state ---------------------------------------------------------------


def write_operator_state(
    storage: CheckpointStorage,
    snapshot_dir: str,
    operator_id: str,
    subtask_index: int,
    states: Mapping[str, tuple[str, Iterable[Any]]],
) -> OperatorStateHandle:
    """Write ``{state name: (mode, elements)}`` (mode SPLIT_DISTRIBUTE, UNION or BROADCAST) for one
    subtask."""
    data, infos = encode_operator_state(states)
    rel = operator_state_file(operator_id, subtask_index)
    storage.write_atomic(join(snapshot_dir, rel), data)
    return OperatorStateHandle(subtask_index=subtask_index, path=rel, size=len(data), states=infos)


def read_operator_state(storage: CheckpointStorage, path: str) -> dict[str, list[Any]]:
    raw: dict[str, list[Any]] = _unframe(_OS_MAGIC, storage.read(path), path)
    return raw


# -- a keyed state backend (any) -----------------------------------------------------------


def timers_by_key_group(
    backend: KeyedStateBackend,
) -> dict[int, dict[str, dict[Any, list[tuple[int, Any]]]]]:
    """``{key group: {queue name: {key: [(timestamp, namespace), ...]}}}`` of every timer queue."""
    out: dict[int, dict[str, dict[Any, list[tuple[int, Any]]]]] = {}
    for queue_name, queue in backend.timer_queues().items():
        if not len(queue):
            continue
        for group, timers in queue.entries_by_key_group(backend.max_parallelism).items():
            per_key = out.setdefault(group, {}).setdefault(queue_name, {})
            for timestamp, key, namespace in sorted(timers, key=lambda t: t[0]):
                per_key.setdefault(key, []).append((timestamp, namespace))
    return out


class KeyedStateCapture:
    """What the synchronous part of a checkpoint captured of one keyed operator (Flink's
    SnapshotResources): a view of its state that later changes do not affect, written to storage
    by :meth:`write`, off the task thread.

    ``entries`` yields ``(key group, {state: {key: value}})`` ascending; it is consumed once, by
    :meth:`write`; ``release`` frees what the view holds (a RocksDB checkpoint directory).
    """

    def __init__(
        self,
        *,
        operator_id: str,
        subtask_index: int,
        parallelism: int,
        max_parallelism: int,
        key_group_range: tuple[int, int],
        kinds: dict[str, str],
        timers: dict[int, dict[str, dict[Any, list[tuple[int, Any]]]]],
        entries: Iterable[tuple[int, Mapping[str, Mapping[Any, Any]]]],
        release: Callable[[], None] = lambda: None,
        uid: str | None = None,
        name: str = "",
        operator_state: bytes | None = None,
        operator_state_infos: dict[str, OperatorListStateInfo] | None = None,
    ) -> None:
        self.operator_id = operator_id
        self.subtask_index = subtask_index
        self.parallelism = parallelism
        self.max_parallelism = max_parallelism
        self.key_group_range = key_group_range
        self.kinds = kinds
        self.timers = timers
        self.entries = entries
        self.release = release
        self.uid = uid
        self.name = name
        self.operator_state = operator_state
        self.operator_state_infos = operator_state_infos or {}

    def write(
        self,
        storage: CheckpointStorage,
        snapshot_dir: str,
        cancelled: threading.Event | None = None,
        written: list[str] | None = None,
    ) -> OperatorSubtaskState:
        """Write the key groups with state or timers, one canonical framed blob each, into one
        file of the subtask (format 2: one file create and rename per checkpoint instead of one
        per key group, which the profile of a checkpoint every second showed as much as the
        split), and the operator state; ``written`` collects the relative paths as they are
        written (what a cleanup deletes). Raises :class:`CheckpointCancelledError` between key
        groups once ``cancelled`` is set."""
        kinds, timers, operator_id = self.kinds, self.timers, self.operator_id
        timer_groups = sorted(timers)
        next_timer = 0
        done = written if written is not None else []
        rel = keyed_state_file(operator_id, self.subtask_index)
        blobs: list[bytes] = []
        offset = 0

        def write(group: int, entries: Mapping[str, Mapping[Any, Any]]) -> KeyGroupStateHandle:
            nonlocal offset
            if cancelled is not None and cancelled.is_set():
                raise CheckpointCancelledError(f"checkpoint writing to {snapshot_dir} was cancelled")
            states: dict[str, tuple[str, Mapping[Any, Any]]] = {
                state: (kinds[state], values) for state, values in entries.items()
            }
            for queue_name, per_key in timers.get(group, {}).items():
                states[queue_name] = (TIMER_KIND, per_key)
            data, counts = encode_key_group(states)
            blobs.append(data)
            handle = KeyGroupStateHandle(
                key_group=group, path=rel, size=len(data), entries=counts, offset=offset
            )
            offset += len(data)
            return handle

        handles: list[KeyGroupStateHandle] = []
        for group, entries in self.entries:
            while next_timer < len(timer_groups) and timer_groups[next_timer] < group:
                handles.append(write(timer_groups[next_timer], {}))
                next_timer += 1
            if next_timer < len(timer_groups) and timer_groups[next_timer] == group:
                next_timer += 1
            handles.append(write(group, entries))
        for group in timer_groups[next_timer:]:
            handles.append(write(group, {}))
        if blobs:
            done.append(rel)
            storage.write_atomic(join(snapshot_dir, rel), b"".join(blobs))
            blobs.clear()
        op_handle = self.write_operator_state(storage, snapshot_dir, done)
        return OperatorSubtaskState(
            operator_id=operator_id,
            subtask_index=self.subtask_index,
            parallelism=self.parallelism,
            max_parallelism=self.max_parallelism,
            uid=self.uid,
            name=self.name,
            key_group_range=self.key_group_range,
            keyed_state_kinds=kinds,
            key_groups=handles,
            operator_state=op_handle,
        )

    def write_operator_state(
        self, storage: CheckpointStorage, snapshot_dir: str, written: list[str]
    ) -> OperatorStateHandle | None:
        if self.operator_state is None:
            return None
        rel = operator_state_file(self.operator_id, self.subtask_index)
        written.append(rel)
        storage.write_atomic(join(snapshot_dir, rel), self.operator_state)
        return OperatorStateHandle(
            subtask_index=self.subtask_index,
            path=rel,
            size=len(self.operator_state),
            states=self.operator_state_infos,
        )


def encode_operator_state(
    states: Mapping[str, tuple[str, Iterable[Any]]],
) -> tuple[bytes, dict[str, OperatorListStateInfo]]:
    """The framed bytes of an operator-state file and its infos (taken in the synchronous part:
    the elements are live objects of the operator, and small)."""
    payload: dict[str, list[Any]] = {}
    infos: dict[str, OperatorListStateInfo] = {}
    for name, (mode, elements) in states.items():
        if mode not in (SPLIT_DISTRIBUTE, UNION, BROADCAST):
            raise ValueError(f"unknown operator state mode {mode!r}")
        payload[name] = list(elements)
        infos[name] = OperatorListStateInfo(mode=mode, count=len(payload[name]))
    return _frame(_OS_MAGIC, pickle.dumps(payload, protocol=5)), infos


def copied_key_group_entries(
    backend: KeyedStateBackend,
) -> list[tuple[int, dict[str, dict[Any, Any]]]]:
    """Every key group's entries, copied (``heap_snapshot.copy_table``): a capture for a backend
    that has no ``capture_key_group_entries`` of its own."""
    return [
        (group, {state: copy_table(values) for state, values in entries.items()})
        for group, entries in backend.iter_key_group_entries()
    ]


def capture_keyed_backend(
    backend: KeyedStateBackend,
    *,
    operator_id: str,
    subtask_index: int,
    parallelism: int,
    uid: str | None = None,
    name: str = "",
    operator_states: Mapping[str, tuple[str, Iterable[Any]]] | None = None,
) -> KeyedStateCapture:
    """The synchronous part of a keyed operator's snapshot: a view of its state and timers.

    A backend with ``capture_key_group_entries()`` (RocksDB: a native checkpoint, hard links of
    its table files; heap: its tables copied) says how; any other backend's entries are copied.
    Timers are copied as ``(timestamp, namespace)`` tuples per key, operator list states are
    encoded to bytes. Call it from the task thread, between records.
    """
    kinds: dict[str, str] = {state: str(backend.state_kind(state)) for state in backend.state_names()}
    timers = timers_by_key_group(backend)
    for queue_name in backend.timer_queues():
        kinds[queue_name] = TIMER_KIND
    op_bytes, infos = encode_operator_state(operator_states) if operator_states else (None, None)
    capture = getattr(backend, "capture_key_group_entries", None)
    entries: Iterable[tuple[int, Mapping[str, Mapping[Any, Any]]]]
    release: Callable[[], None] = lambda: None
    if capture is not None:
        entries, release = capture()
    else:
        entries = copied_key_group_entries(backend)
    kgr = backend.key_group_range
    return KeyedStateCapture(
        operator_id=operator_id,
        subtask_index=subtask_index,
        parallelism=parallelism,
        max_parallelism=backend.max_parallelism,
        key_group_range=(kgr.start_key_group, kgr.end_key_group),
        kinds=kinds,
        timers=timers,
        entries=entries,
        release=release,
        uid=uid,
        name=name,
        operator_state=op_bytes,
        operator_state_infos=infos,
    )


def snapshot_keyed_backend(
    storage: CheckpointStorage,
    snapshot_dir: str,
    backend: KeyedStateBackend,
    *,
    operator_id: str,
    subtask_index: int,
    parallelism: int,
    uid: str | None = None,
    name: str = "",
    operator_states: Mapping[str, tuple[str, Iterable[Any]]] | None = None,
) -> OperatorSubtaskState:
    """Snapshot the keyed state and timers of one subtask's operator, from any keyed state backend,
    synchronously: :func:`capture_keyed_backend` and :meth:`KeyedStateCapture.write` in one go.

    Writes one canonical blob per key group that has state or timers (the same bytes whichever
    backend holds the state), all in one file of the subtask, plus the operator list states if
    given, and returns what the subtask acknowledges. Timers are in the blobs as state of kind
    ``"timer"`` named after their queue (``_timer_state/event_<service>`` ...). The backend must
    not change while this runs.
    """
    capture = capture_keyed_backend(
        backend,
        operator_id=operator_id,
        subtask_index=subtask_index,
        parallelism=parallelism,
        uid=uid,
        name=name,
        operator_states=operator_states,
    )
    try:
        return capture.write(storage, snapshot_dir)
    finally:
        capture.release()


def key_group_blobs(
    snapshot_dir: str, handles: Iterable[KeyGroupStateHandle]
) -> list[tuple[int, str, int, int]]:
    """``(key group, absolute path, offset, size)`` of these handles: what
    :func:`restore_keyed_backend` reads (the JobMaster's restore plan makes the same tuples)."""
    return [(h.key_group, join(snapshot_dir, h.path), h.offset, h.size) for h in handles]


def restore_keyed_backend(
    storage: CheckpointStorage,
    backend: KeyedStateBackend,
    key_group_files: Iterable[str | tuple[int, str] | tuple[int, str, int, int]],
) -> int:
    """Load key-group files into any keyed state backend (state and timers); returns the entries read.

    ``key_group_files`` are absolute paths of format 1's files, ``(key group, path)`` pairs, or
    the ``(key group, path, offset, size)`` of :attr:`SubtaskRestore.key_group_files` (offset -1:
    the whole file). A file the key groups share (format 2) is read once for its key groups
    in a row. A file may come from
    a snapshot at another parallelism (a rescale) or from another backend kind: the format is
    the same. Refuses keys whose key group is outside the backend's range. Restored timers are
    added to the backend's timer queues; a timer service on such a queue re-arms its
    processing-time wake-up (whether it was created before or after the restore).
    """
    restored = 0
    max_parallelism = backend.max_parallelism
    key_groups = backend.key_group_range
    shared: tuple[str, bytes] | None = None  # the last shared file read (format 2), read once
    for item in key_group_files:
        offset, size, data = -1, 0, None
        if isinstance(item, str):
            path = item
        elif len(item) == 2:
            path = item[1]
        else:
            path, offset, size = item[1], item[2], item[3]
            if offset >= 0:
                if shared is None or shared[0] != path:
                    shared = (path, storage.read(path))
                data = shared[1]
        for state, (kind, entries) in read_key_group(storage, path, offset, size, data).items():
            for key in entries:
                group = assign_to_key_group(key, max_parallelism)
                if group not in key_groups:
                    raise SnapshotFormatError(
                        f"state file {path} holds key group {group}, outside {key_groups}"
                    )
            if kind == TIMER_KIND:
                backend.timer_queue(state).restore(
                    (timestamp, key, namespace)
                    for key, timers in entries.items()
                    for timestamp, namespace in timers
                )
                restored += sum(len(timers) for timers in entries.values())
            else:
                backend.restore_entries(state, cast("StateKind", kind), entries)
                restored += len(entries)
    return restored


snapshot_heap_backend = snapshot_keyed_backend
"""The former name (the heap backend was the only one); same function."""

restore_heap_backend = restore_keyed_backend
"""The former name (the heap backend was the only one); same function."""
