"""The snapshot format: state handles (what tasks acknowledge) and the ``_metadata`` file.

A checkpoint or savepoint is a directory::

    <dir>/_metadata                         JSON, this module (written last, atomically)
    <dir>/op-<operator id>/keyed-<i>.bin    keyed state of one operator in subtask i: one framed
                                            blob per key group, at the offsets its handles give
                                            (format 2; format 1 wrote kg-<n>.bin, a file per key
                                            group, still read) (snapshot.py)
    <dir>/op-<operator id>/os-<i>.bin       operator (non-keyed) list state of subtask i (snapshot.py)
    <dir>/op-<operator id>/db-<i>/...       incremental RocksDB checkpoints: subtask i's private files
    <dir>/../shared/<backend>-<n>.sst       incremental RocksDB checkpoints: table files, shared by
                                            the job's checkpoints (checkpoint/incremental.py)

Every path inside ``_metadata`` is *relative to the directory*, so a savepoint can be moved or
copied anywhere (another machine, another bucket) and still restores. The metadata is plain JSON
(msgspec), readable without user code: the JobMaster plans a restore (which subtask reads which
files) from it alone and never unpickles state. ``format_version`` is there from day one; a reader
refuses versions it does not know.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools

import msgspec

from flott.runtime.checkpoint.errors import SnapshotFormatError
from flott.runtime.checkpoint.storage import CheckpointStorage, join

FORMAT_NAME = "flott-snapshot"
FORMAT_VERSION = 2
"""2: a subtask's key groups in one file at offsets (``KeyGroupStateHandle.offset``); 1: a file
per key group. Both are read; a reader of version 1 refuses version 2 instead of misreading it."""
SUPPORTED_FORMAT_VERSIONS = frozenset({1, 2})
METADATA_FILE = "_metadata"
SAVEPOINT_MARKER_FILE = "_savepoint-marker"
SHARED_DIR = "shared"
"""Incremental checkpoints' table files: ``<checkpoint dir>/<job id>/shared/``, next to ``chk-<n>``."""

# Operator list-state redistribution modes (Flink's OperatorStateHandle.Mode).
SPLIT_DISTRIBUTE = "SPLIT_DISTRIBUTE"
"""Elements of all subtasks are pooled and split over the new subtasks (each element once)."""
UNION = "UNION"
"""Every new subtask gets every element of every old subtask."""
BROADCAST = "BROADCAST"
"""Every old subtask holds the same copy (broadcast state): new subtask ``i`` restores the copy of
old subtask ``i mod old parallelism``, so scaling out spreads the reads round-robin (Flink's rule)."""


class KeyGroupStateHandle(msgspec.Struct, frozen=True, forbid_unknown_fields=False):
    """Keyed state of one operator in one key group: a framed blob, a whole file or part of one."""

    key_group: int
    path: str
    """Relative to the snapshot directory."""
    size: int
    """Bytes of this key group's framed blob."""
    entries: dict[str, int] = {}
    """Number of keys per state name (for ``savepoint inspect``)."""
    offset: int = -1
    """Where the blob starts in ``path`` (the subtask's key groups share one file, format 2);
    -1: the whole file is the blob (format 1, a file per key group)."""


class OperatorListStateInfo(msgspec.Struct, frozen=True):
    mode: str
    count: int


class OperatorStateHandle(msgspec.Struct, frozen=True):
    """Operator (non-keyed) list states of one subtask (e.g. a source's offsets): one file."""

    subtask_index: int
    path: str
    size: int
    states: dict[str, OperatorListStateInfo] = {}


class SharedFileHandle(msgspec.Struct, frozen=True):
    """A RocksDB table file of an incremental checkpoint, in the job's ``shared/`` directory: a
    later checkpoint of the same backend that still has the file refers to it instead of
    uploading it again (the coordinator's SharedStateRegistry counts the references)."""

    name: str
    """The file's name in the RocksDB directory (``000042.sst``)."""
    path: str
    """Relative to the job's checkpoint directory (the parent of ``chk-<n>``): ``shared/...``."""
    size: int
    checkpoint_id: int
    """The checkpoint that uploaded it."""


class PrivateFileHandle(msgspec.Struct, frozen=True):
    """A RocksDB file only this checkpoint needs (MANIFEST, CURRENT, OPTIONS ...), in its directory."""

    name: str
    path: str
    """Relative to the snapshot directory."""
    size: int


class IncrementalKeyedStateHandle(msgspec.Struct, frozen=True):
    """One subtask's keyed state as a RocksDB native checkpoint (Flink's
    IncrementalRemoteKeyedStateHandle): its table files (shared) and the rest (private).
    The key groups of ``key_group_range`` are all in it; a restore opens the files as a database
    and reads the key groups it owns."""

    backend_id: str
    key_group_range: tuple[int, int]
    state_names: dict[str, str]
    """RocksDB state id (as a string) -> state name."""
    shared: list[SharedFileHandle] = []
    private: list[PrivateFileHandle] = []

    @property
    def state_size(self) -> int:
        return sum(f.size for f in self.shared) + sum(f.size for f in self.private)

    def checkpointed_size(self, checkpoint_id: int) -> int:
        """Bytes this checkpoint wrote (new table files and the private files)."""
        new = sum(f.size for f in self.shared if f.checkpoint_id == checkpoint_id)
        return new + sum(f.size for f in self.private)


class ChannelStateHandle(msgspec.Struct, frozen=True):
    """An unaligned checkpoint's in-flight data of one subtask (Flink's InputChannelStateHandle and
    ResultSubpartitionStateHandle in one file): the batches its input channels delivered before
    their barriers and the batches its barrier overtook in its output subpartitions
    (flott.runtime.checkpoint.channel_state). Kept on the chain's head operator."""

    subtask_index: int
    path: str
    size: int
    input_buffers: int = 0
    output_buffers: int = 0


class OperatorSubtaskState(msgspec.Struct, frozen=True):
    """What one subtask acknowledges for one of its (chained) operators."""

    operator_id: str
    subtask_index: int
    parallelism: int
    max_parallelism: int
    uid: str | None = None
    name: str = ""
    key_group_range: tuple[int, int] | None = None
    """Inclusive key groups this subtask owned when it snapshotted (None for non-keyed operators)."""
    keyed_state_kinds: dict[str, str] = {}
    key_groups: list[KeyGroupStateHandle] = []
    operator_state: OperatorStateHandle | None = None
    incremental: IncrementalKeyedStateHandle | None = None
    """RocksDB incremental checkpoints: the keyed state (``key_groups`` then hold only timers)."""
    channel_state: ChannelStateHandle | None = None
    """Unaligned checkpoints: the subtask's in-flight data (on its chain's head operator)."""

    @property
    def state_size(self) -> int:
        size = sum(h.size for h in self.key_groups)
        size += self.incremental.state_size if self.incremental is not None else 0
        size += self.channel_state.size if self.channel_state is not None else 0
        return size + (self.operator_state.size if self.operator_state is not None else 0)

    def checkpointed_size(self, checkpoint_id: int) -> int:
        """Bytes written for this checkpoint (the state size minus reused shared files)."""
        if self.incremental is None:
            return self.state_size
        reused = self.incremental.state_size - self.incremental.checkpointed_size(checkpoint_id)
        return self.state_size - reused


class TaskStateSnapshot(msgspec.Struct, frozen=True):
    """A task's acknowledgement payload: one entry per operator in its chain."""

    operators: list[OperatorSubtaskState] = []
    end_of_input: bool = False
    """A source task whose input was exhausted when it took this snapshot: once a checkpoint in
    which every source says so completes, the sources may finish (their final checkpoint)."""

    @property
    def state_size(self) -> int:
        return sum(op.state_size for op in self.operators)

    def checkpointed_size(self, checkpoint_id: int) -> int:
        """Bytes written for checkpoint ``checkpoint_id`` (less than the state size when incremental)."""
        return sum(op.checkpointed_size(checkpoint_id) for op in self.operators)


class OperatorMetadata(msgspec.Struct, frozen=True):
    """All state of one operator in a snapshot, merged over its subtasks."""

    operator_id: str
    parallelism: int
    max_parallelism: int
    uid: str | None = None
    name: str = ""
    keyed_state_kinds: dict[str, str] = {}
    key_groups: list[KeyGroupStateHandle] = []
    """Sorted by key group; key groups without state have no file and are absent."""
    operator_states: list[OperatorStateHandle] = []
    """Sorted by subtask index."""
    incremental: list[IncrementalKeyedStateHandle] = []
    """Incremental RocksDB checkpoints: one handle per old subtask, by key-group range."""
    channel_states: list[ChannelStateHandle] = []
    """Unaligned checkpoints: the in-flight data per old subtask, by subtask index."""

    @property
    def state_size(self) -> int:
        size = sum(h.size for h in self.key_groups) + sum(h.size for h in self.operator_states)
        size += sum(h.size for h in self.channel_states)
        return size + sum(h.state_size for h in self.incremental)

    def checkpointed_size(self, checkpoint_id: int) -> int:
        """Bytes written for checkpoint ``checkpoint_id`` (shared files reused from older ones not)."""
        reused = sum(h.state_size - h.checkpointed_size(checkpoint_id) for h in self.incremental)
        return self.state_size - reused

    def state_sizes(self) -> dict[str, int]:
        """Number of entries per state name (keyed: keys; operator state: list elements)."""
        out: dict[str, int] = {}
        for h in self.key_groups:
            for name, n in h.entries.items():
                out[name] = out.get(name, 0) + n
        for oh in self.operator_states:
            for name, info in oh.states.items():
                out[name] = out.get(name, 0) + info.count
        return out


class CheckpointMetadata(msgspec.Struct, frozen=True):
    """The ``_metadata`` file."""

    job_id: str
    checkpoint_id: int
    timestamp: int
    is_savepoint: bool
    checkpoint_type: str
    """Flink's RestAPICheckpointType: CHECKPOINT, SAVEPOINT, SYNC_SAVEPOINT."""
    operators: list[OperatorMetadata]
    format: str = FORMAT_NAME
    format_version: int = FORMAT_VERSION
    savepoint_format: str = "CANONICAL"
    savepoint_token: str = ""
    """Savepoints: a random token; the :data:`SAVEPOINT_MARKER_FILE` next to ``_metadata`` holds
    an HMAC of the savepoint's location under it (see :func:`savepoint_marker`)."""

    def state_files(self) -> list[str]:
        """Every state file the snapshot names, relative to its directory."""
        files = [h.path for op in self.operators for h in op.key_groups]
        files += [f.path for op in self.operators for h in op.incremental for f in h.private]
        files += [h.path for op in self.operators for h in op.operator_states]
        files += [h.path for op in self.operators for h in op.channel_states]
        return list(dict.fromkeys(files))  # key groups share their subtask's file

    def shared_files(self) -> list[str]:
        """The shared files (incremental checkpoints) it refers to, relative to the job's
        checkpoint directory (the parent of the snapshot directory)."""
        return [f.path for op in self.operators for h in op.incremental for f in h.shared]

    @property
    def state_size(self) -> int:
        return sum(op.state_size for op in self.operators)

    def checkpointed_size(self, checkpoint_id: int | None = None) -> int:
        """Bytes this checkpoint wrote (its own id unless given)."""
        cid = self.checkpoint_id if checkpoint_id is None else checkpoint_id
        return sum(op.checkpointed_size(cid) for op in self.operators)

    def operator(self, operator_id_or_uid: str) -> OperatorMetadata:
        for op in self.operators:
            if op.operator_id == operator_id_or_uid or (op.uid is not None and op.uid == operator_id_or_uid):
                return op
        raise KeyError(operator_id_or_uid)


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(CheckpointMetadata)


def merge_operator_states(subtask_states: list[OperatorSubtaskState]) -> list[OperatorMetadata]:
    """Merge the acknowledged per-subtask states into per-operator metadata.

    Raises :class:`SnapshotFormatError` if subtasks disagree (parallelism, max parallelism) or two
    subtasks claim the same key group: such a snapshot would restore state twice.
    """
    by_op: dict[str, list[OperatorSubtaskState]] = {}
    for s in subtask_states:
        by_op.setdefault(s.operator_id, []).append(s)
    out = []
    for op_id in sorted(by_op):
        states = sorted(by_op[op_id], key=lambda s: s.subtask_index)
        first = states[0]
        if any(
            s.parallelism != first.parallelism or s.max_parallelism != first.max_parallelism for s in states
        ):
            raise SnapshotFormatError(f"operator {op_id}: subtasks report different (max) parallelism")
        seen: dict[int, KeyGroupStateHandle] = {}
        kinds: dict[str, str] = {}
        for s in states:
            kinds.update(s.keyed_state_kinds)
            for h in s.key_groups:
                if not 0 <= h.key_group < first.max_parallelism:
                    raise SnapshotFormatError(f"operator {op_id}: key group {h.key_group} out of range")
                if h.key_group in seen:
                    raise SnapshotFormatError(f"operator {op_id}: key group {h.key_group} snapshotted twice")
                seen[h.key_group] = h
        op_states = [s.operator_state for s in states if s.operator_state is not None]
        incremental = sorted(
            (s.incremental for s in states if s.incremental is not None), key=lambda h: h.key_group_range
        )
        for a, b in itertools.pairwise(incremental):
            if b.key_group_range[0] <= a.key_group_range[1]:
                raise SnapshotFormatError(
                    f"operator {op_id}: key groups {b.key_group_range} snapshotted twice"
                )
        out.append(
            OperatorMetadata(
                operator_id=op_id,
                parallelism=first.parallelism,
                max_parallelism=first.max_parallelism,
                uid=first.uid,
                name=first.name,
                keyed_state_kinds=kinds,
                key_groups=[seen[g] for g in sorted(seen)],
                operator_states=sorted(op_states, key=lambda h: h.subtask_index),
                incremental=incremental,
                channel_states=sorted(
                    (s.channel_state for s in states if s.channel_state is not None),
                    key=lambda h: h.subtask_index,
                ),
            )
        )
    return out


def encode_metadata(metadata: CheckpointMetadata) -> bytes:
    return _encoder.encode(metadata)


def decode_metadata(data: bytes, where: str = "<bytes>") -> CheckpointMetadata:
    """The metadata in ``data``, or :class:`SnapshotFormatError` for anything else (a savepoint path
    comes from a client: its ``_metadata`` may hold any bytes)."""
    try:
        raw = msgspec.json.decode(data)
    except msgspec.DecodeError as e:
        raise SnapshotFormatError(f"corrupt snapshot metadata {where}: not valid JSON ({e})") from e
    except RecursionError:  # msgspec's nesting limit; no metadata file nests this deep
        raise SnapshotFormatError(f"corrupt snapshot metadata {where}: nested too deeply") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT_NAME:
        raise SnapshotFormatError(f"{where} is not a flott snapshot metadata file")
    version = raw.get("format_version")
    if type(version) is not int or version not in SUPPORTED_FORMAT_VERSIONS:  # a list is unhashable
        raise SnapshotFormatError(
            f"snapshot metadata {where} has format version {version!r}; this flott reads "
            f"{sorted(SUPPORTED_FORMAT_VERSIONS)}"
        )
    try:
        return _decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise SnapshotFormatError(f"corrupt snapshot metadata {where}: {e}") from e
    except RecursionError:
        raise SnapshotFormatError(f"corrupt snapshot metadata {where}: nested too deeply") from None


def shared_root(snapshot_dir: str) -> str:
    """The job's checkpoint directory (where ``shared/`` is) of a ``.../<job>/chk-<n>`` directory."""
    return snapshot_dir.rstrip("/").rsplit("/", 1)[0]


def snapshot_dir_of(path: str) -> str:
    """A snapshot path as users give it (the directory or its ``_metadata`` file) -> the directory."""
    p = path.rstrip("/")
    if p.endswith("/" + METADATA_FILE) or p == METADATA_FILE:
        return p[: -len(METADATA_FILE)].rstrip("/") or "."
    return p


def write_metadata(storage: CheckpointStorage, snapshot_dir: str, metadata: CheckpointMetadata) -> str:
    """Write ``_metadata`` atomically (temporary file, then rename); returns its path.

    A savepoint with a ``savepoint_token`` gets its disposal marker first, so a ``_metadata``
    that exists always has its marker."""
    if metadata.savepoint_token:
        marker = savepoint_marker(snapshot_dir, metadata.savepoint_token)
        storage.write_atomic(join(snapshot_dir, SAVEPOINT_MARKER_FILE), marker)
    path = join(snapshot_dir, METADATA_FILE)
    storage.write_atomic(path, encode_metadata(metadata))
    return path


def savepoint_marker(snapshot_dir: str, token: str) -> bytes:
    """What the marker file of a savepoint flott wrote at ``snapshot_dir`` holds.

    Disposal deletes only a directory whose marker matches its ``_metadata``'s token *and* its own
    location: a ``_metadata`` copied elsewhere (with or without the marker) is not disposable there,
    so a disposal request can never delete a directory flott did not write as a savepoint.
    """
    from flott.runtime.checkpoint.storage import canonical_location

    digest = hmac.new(token.encode(), canonical_location(snapshot_dir).encode(), hashlib.sha256)
    return f"flott-savepoint {digest.hexdigest()}\n".encode()


def check_savepoint_marker(
    storage: CheckpointStorage, snapshot_dir: str, metadata: CheckpointMetadata
) -> None:
    """Raise :class:`SnapshotFormatError` unless ``snapshot_dir`` holds a savepoint flott wrote there."""
    marker_path = join(snapshot_dir, SAVEPOINT_MARKER_FILE)
    found = storage.read(marker_path) if metadata.savepoint_token and storage.exists(marker_path) else b""
    expected = savepoint_marker(snapshot_dir, metadata.savepoint_token) if metadata.savepoint_token else b"-"
    if not hmac.compare_digest(found, expected):
        raise SnapshotFormatError(
            f"{snapshot_dir} is not a savepoint flott wrote at this location (its "
            f"{SAVEPOINT_MARKER_FILE} is missing or does not match): it is not disposed; a moved or "
            "copied savepoint is deleted by hand"
        )


def _inside(rel: str) -> bool:
    parts = rel.split("/")
    return not (not rel or rel.startswith("/") or "://" in rel or "\\" in rel or ".." in parts or "" in parts)


def checked_state_files(metadata: CheckpointMetadata, where: str) -> list[str]:
    """The snapshot's state files, refusing any path that could leave its directory."""
    files = metadata.state_files()
    for rel in files:
        if not _inside(rel):
            raise SnapshotFormatError(
                f"{where}: state file path {rel!r} is not inside the snapshot directory"
            )
    for rel in metadata.shared_files():
        if not (_inside(rel) and rel.startswith(SHARED_DIR + "/")):
            raise SnapshotFormatError(
                f"{where}: shared file path {rel!r} is not inside the job's {SHARED_DIR}/ directory"
            )
    return files


def load_metadata(storage: CheckpointStorage, path: str) -> CheckpointMetadata:
    """Read a snapshot's metadata from its directory (or the ``_metadata`` file itself).

    Raises :class:`SnapshotFormatError` with the path in the message when the directory or the
    file is missing, or the file is corrupt or of an unknown format version.
    """
    directory = snapshot_dir_of(path)
    meta_path = join(directory, METADATA_FILE)
    if not storage.exists(meta_path):
        if not storage.exists(directory):
            raise SnapshotFormatError(f"snapshot path {path} does not exist")
        raise SnapshotFormatError(
            f"snapshot path {path} has no {METADATA_FILE} file: not a completed checkpoint or savepoint"
        )
    return decode_metadata(storage.read(meta_path), meta_path)
