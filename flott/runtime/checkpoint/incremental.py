"""Incremental checkpoints of the RocksDB backend (Flink's RocksIncrementalSnapshotStrategy).

``execution.checkpointing.incremental: true`` (or the older ``state.backend.incremental``)
with ``state.backend.type: rocksdb``: a checkpoint uploads only the RocksDB table files that
are new since the last checkpoint the task knows completed, so its bytes and time follow what
changed, not the size of the state.

* **Synchronous part** (task thread): the write-back caches are flushed and RocksDB makes a
  *native checkpoint*: the memtable is written to a table file and every live table file is
  hard-linked into a directory under the backend's working directory. Timers (in memory) are
  copied; operator state is encoded.
* **Asynchronous part** (the task's writer): each table file (``*.sst``, immutable once
  written) that the base (the files of the last completed checkpoint) already has is referred
  to by its handle; the others are uploaded to ``<checkpoint dir>/<job>/shared/<backend id>-<name>``.
  The rest (MANIFEST, CURRENT, OPTIONS, ...) are *private* files of the checkpoint, in its own
  directory. Timers go into canonical key-group files as in a full checkpoint.
* **Completion**: the task's base becomes the files of the checkpoint it is told completed
  (``notify_complete``); files of a checkpoint that was aborted are never reused. The
  coordinator's :class:`~flott.runtime.checkpoint.shared_state_registry.SharedStateRegistry`
  deletes a shared file once no retained checkpoint refers to it.
* **Restore** (:func:`restore_incremental`): the files of each old subtask whose key groups
  overlap the new subtask's are downloaded into a temporary directory, opened read-only as a
  database, and the key groups the new subtask owns are read into its backend: the same path
  serves a restart and a rescale.

Savepoints are always full canonical snapshots (self-contained, as in Flink).
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from flott.runtime.checkpoint.errors import CheckpointCancelledError
from flott.runtime.checkpoint.metadata import (
    SHARED_DIR,
    IncrementalKeyedStateHandle,
    OperatorSubtaskState,
    PrivateFileHandle,
    SharedFileHandle,
    shared_root,
)
from flott.runtime.checkpoint.snapshot import (
    KeyedStateCapture,
    encode_operator_state,
    operator_dir,
    timers_by_key_group,
)
from flott.runtime.checkpoint.storage import CheckpointStorage, join
from flott.runtime.state.backend import TIMER_KIND
from flott.runtime.state.key_groups import KeyGroupRange
from flott.runtime.state.rocksdb.rocksdb_keyed_state_backend import scan_native_checkpoint

if TYPE_CHECKING:
    from flott.runtime.state.backend import KeyedStateBackend, StateKind

INCREMENTAL_KEY = "execution.checkpointing.incremental"
DEPRECATED_INCREMENTAL_KEY = "state.backend.incremental"


def incremental_enabled(config: Mapping[str, str]) -> bool:
    """Whether the job asks for incremental checkpoints (Flink's key, then its older name)."""
    for key in (INCREMENTAL_KEY, DEPRECATED_INCREMENTAL_KEY):
        value = config.get(key)
        if value is not None and str(value).strip():
            return str(value).strip().lower() == "true"
    return False


def _private_dir(operator_id: str, subtask_index: int) -> str:
    return f"{operator_dir(operator_id)}/db-{subtask_index:05d}"


def _read_local(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


class IncrementalSnapshotter:
    """One keyed operator's incremental checkpoints in one task: which table files the last
    completed checkpoint holds (the base), and the uploads of the checkpoints in flight.

    ``capture`` and the notifications run on the task thread, ``write`` on the writer: the
    bookkeeping is behind a lock.
    """

    def __init__(self, operator_id: str, subtask_index: int, parallelism: int) -> None:
        self.operator_id = operator_id
        self.subtask_index = subtask_index
        self.parallelism = parallelism
        self.backend_id = secrets.token_hex(8)
        """Names the uploads of this backend instance apart (table file numbers are per database)."""
        self._lock = threading.Lock()
        self._base: dict[str, SharedFileHandle] = {}
        self._base_checkpoint = 0
        self._uploaded: dict[int, dict[str, SharedFileHandle]] = {}

    def capture(
        self,
        backend: KeyedStateBackend,
        checkpoint_id: int,
        *,
        uid: str | None,
        name: str,
        operator_states: Mapping[str, tuple[str, Iterable[Any]]] | None,
    ) -> IncrementalCapture:
        """The synchronous part: a native checkpoint, the timers and the operator state."""
        native = getattr(backend, "native_checkpoint", None)
        if native is None:
            raise TypeError("incremental checkpoints need the RocksDB state backend")
        local_dir, names = native()
        try:
            kinds = {n: str(backend.state_kind(n)) for n in backend.state_names()}
            for queue_name in backend.timer_queues():
                kinds[queue_name] = TIMER_KIND
            op_bytes, infos = encode_operator_state(operator_states) if operator_states else (None, None)
            kgr = backend.key_group_range
            timers_only = KeyedStateCapture(
                operator_id=self.operator_id,
                subtask_index=self.subtask_index,
                parallelism=self.parallelism,
                max_parallelism=backend.max_parallelism,
                key_group_range=(kgr.start_key_group, kgr.end_key_group),
                kinds=kinds,
                timers=timers_by_key_group(backend),
                entries=[],
                uid=uid,
                name=name,
                operator_state=op_bytes,
                operator_state_infos=infos,
            )
        except BaseException:
            shutil.rmtree(local_dir, ignore_errors=True)
            raise
        with self._lock:
            base = dict(self._base)
        return IncrementalCapture(self, checkpoint_id, local_dir, names, base, timers_only)

    def uploaded(self, checkpoint_id: int, files: dict[str, SharedFileHandle]) -> None:
        with self._lock:
            self._uploaded[checkpoint_id] = files

    def notify_complete(self, checkpoint_id: int) -> None:
        """The checkpoint completed: its files are the base of the next ones."""
        with self._lock:
            files = self._uploaded.get(checkpoint_id)
            if files is not None and checkpoint_id > self._base_checkpoint:
                self._base, self._base_checkpoint = files, checkpoint_id
            for cid in [c for c in self._uploaded if c <= checkpoint_id]:
                del self._uploaded[cid]

    def notify_aborted(self, checkpoint_id: int) -> None:
        with self._lock:
            self._uploaded.pop(checkpoint_id, None)


class IncrementalCapture:
    """One checkpoint's synchronous capture of a RocksDB backend; :meth:`write` uploads it."""

    def __init__(
        self,
        owner: IncrementalSnapshotter,
        checkpoint_id: int,
        local_dir: str,
        names: dict[int, str],
        base: dict[str, SharedFileHandle],
        timers: KeyedStateCapture,
    ) -> None:
        self._owner = owner
        self.checkpoint_id = checkpoint_id
        self.local_dir = local_dir
        self.names = names
        self.base = base
        self.timers = timers
        self.shared_written: list[str] = []
        """Shared files this checkpoint uploaded (relative to the job directory): a cleanup deletes them."""
        self._shared_root = ""

    def write(
        self,
        storage: CheckpointStorage,
        snapshot_dir: str,
        cancelled: threading.Event | None = None,
        written: list[str] | None = None,
    ) -> OperatorSubtaskState:
        done = written if written is not None else []
        owner, cid = self._owner, self.checkpoint_id
        root = self._shared_root = shared_root(snapshot_dir)
        shared: list[SharedFileHandle] = []
        private: list[PrivateFileHandle] = []
        files: dict[str, SharedFileHandle] = {}
        for file_name in sorted(os.listdir(self.local_dir)):
            if cancelled is not None and cancelled.is_set():
                raise CheckpointCancelledError(f"checkpoint writing to {snapshot_dir} was cancelled")
            local = os.path.join(self.local_dir, file_name)
            if file_name.endswith(".sst"):
                handle = self.base.get(file_name)
                if handle is None:
                    rel = f"{SHARED_DIR}/{owner.backend_id}-{file_name}"
                    self.shared_written.append(rel)
                    data = _read_local(local)
                    storage.write_atomic(join(root, rel), data)
                    handle = SharedFileHandle(file_name, rel, len(data), cid)
                shared.append(handle)
                files[file_name] = handle
            else:
                rel = f"{_private_dir(owner.operator_id, owner.subtask_index)}/{file_name}"
                done.append(rel)
                data = _read_local(local)
                storage.write_atomic(join(snapshot_dir, rel), data)
                private.append(PrivateFileHandle(file_name, rel, len(data)))
        state = self.timers.write(storage, snapshot_dir, cancelled, done)
        owner.uploaded(cid, files)
        start, end = state.key_group_range or (0, -1)
        incremental = IncrementalKeyedStateHandle(
            backend_id=owner.backend_id,
            key_group_range=(start, end),
            state_names={str(i): n for i, n in self.names.items()},
            shared=shared,
            private=private,
        )
        return OperatorSubtaskState(
            operator_id=state.operator_id,
            subtask_index=state.subtask_index,
            parallelism=state.parallelism,
            max_parallelism=state.max_parallelism,
            uid=state.uid,
            name=state.name,
            key_group_range=state.key_group_range,
            keyed_state_kinds=dict(state.keyed_state_kinds),
            key_groups=state.key_groups,
            operator_state=state.operator_state,
            incremental=incremental,
        )

    def release(self) -> None:
        """Delete the local native checkpoint (the hard links; the database keeps its files)."""
        shutil.rmtree(self.local_dir, ignore_errors=True)
        self.timers.release()

    def cleanup(self, storage: CheckpointStorage) -> None:
        """After a cancellation or failure: delete the shared files this checkpoint uploaded."""
        self.release()
        if self.shared_written and self._shared_root:
            storage.delete_files(self._shared_root, self.shared_written)


def restore_incremental(
    storage: CheckpointStorage,
    backend: KeyedStateBackend,
    handles: Iterable[tuple[tuple[int, int], dict[str, str], dict[str, str], list[tuple[str, str]]]],
    work_dir: str | None = None,
) -> int:
    """Read the key groups ``backend`` owns out of incremental checkpoint handles.

    Each handle is ``(old key-group range, {state id: name}, {state name: kind}, [(file name,
    absolute path)])``. Its files are downloaded into a temporary directory, opened read-only,
    and the entries of the backend's key groups are restored state by state. Returns the number
    of entries restored.
    """
    restored = 0
    mine = backend.key_group_range
    for _old_range, state_names, kinds, files in handles:
        tmp = tempfile.mkdtemp(prefix="flott-restore-", dir=work_dir)
        try:
            for file_name, path in files:
                with open(os.path.join(tmp, file_name), "wb") as f:
                    f.write(storage.read(path))
            names = {int(i): n for i, n in state_names.items()}
            for _group, entries in scan_native_checkpoint(tmp, names, cast(KeyGroupRange, mine)):
                for state, values in entries.items():
                    backend.restore_entries(state, cast("StateKind", kinds.get(state, "value")), values)
                    restored += len(values)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return restored
