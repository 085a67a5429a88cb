"""Restore planning: which new subtask reads which files of a snapshot (the basis of rescaling).

Pure and user-code free: it reads only the metadata, so the JobMaster computes it and ships each
subtask its :class:`SubtaskRestore` with the deployment.

* Keyed state moves a key group at a time: new subtask ``i`` of ``p`` owns Flink's key-group
  range ``[ceil(i*M/p), floor(((i+1)*M-1)/p)]`` (M = max parallelism, which never changes for
  the life of the state) and reads exactly the files of those key groups. The ranges partition
  ``[0, M)``, so every key group is restored exactly once, whatever the new parallelism.
* Operator list state (sources' offsets/splits): SPLIT_DISTRIBUTE at an unchanged parallelism
  gives each subtask the elements it wrote (as Flink's round-robin repartitioner, which
  repartitions only when the parallelism changed); at another parallelism it pools the elements of
  all old subtasks in order and gives each new subtask a contiguous share (Flink's round-robin
  repartitioner at element granularity); UNION gives every new subtask everything; BROADCAST
  (broadcast state, the same copy in every old subtask) gives new subtask ``i`` the whole copy of
  old subtask ``i mod old parallelism``, so no copy is read by many more subtasks than another.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from flott.errors import NotYetSupportedError
from flott.runtime.checkpoint.errors import RestoreError
from flott.runtime.checkpoint.metadata import (
    BROADCAST,
    SPLIT_DISTRIBUTE,
    UNION,
    CheckpointMetadata,
    OperatorMetadata,
    shared_root,
)
from flott.runtime.checkpoint.storage import join
from flott.runtime.state.key_groups import KeyGroupRange, compute_key_group_range_for_operator_index


class SnapshotToRestore:
    """A completed checkpoint or savepoint a new attempt starts from."""

    def __init__(
        self,
        metadata: CheckpointMetadata,
        external_path: str,
        allow_non_restored: bool,
        older_checkpoints: list[tuple[CheckpointMetadata, str]] | None = None,
    ) -> None:
        self.metadata = metadata
        self.external_path = external_path
        self.allow_non_restored = allow_non_restored
        self.older_checkpoints = list(older_checkpoints or [])
        """A recovered job (a JobManager taking over): the job's other retained checkpoints,
        ``(metadata, directory)`` oldest first, retained again by the new coordinator."""
        self.reported = False


@dataclass(frozen=True)
class OperatorStateSlice:
    """Elements ``[start, end)`` of list state ``state_name`` in the operator-state file ``path``."""

    path: str
    state_name: str
    start: int
    end: int


@dataclass(frozen=True)
class SubtaskRestore:
    """What one new subtask of one operator restores."""

    operator_id: str
    subtask_index: int
    parallelism: int
    max_parallelism: int
    key_group_range: KeyGroupRange
    key_group_files: list[tuple[int, str, int, int]] = field(default_factory=list)
    """``(key group, absolute path, offset, size)`` for the key groups of the range that have
    state; offset -1: the whole file (format 1)."""
    keyed_state_kinds: dict[str, str] = field(default_factory=dict)
    operator_state: list[OperatorStateSlice] = field(default_factory=list)
    union_state_files: list[str] = field(default_factory=list)
    """Operator-state files whose UNION states this subtask reads whole."""
    incremental: list[tuple[tuple[int, int], dict[str, str], dict[str, str], list[tuple[str, str]]]] = field(
        default_factory=list
    )
    """Incremental RocksDB handles whose key groups overlap the range: ``(old range, {state id:
    name}, {state name: kind}, [(file name, absolute path)])`` (shared and private files)."""
    channel_state: str | None = None
    """Absolute path of the subtask's in-flight data (an unaligned checkpoint), if it had any."""


def _split(total: int, parts: int, index: int) -> tuple[int, int]:
    """Contiguous share ``index`` of ``total`` elements over ``parts`` (first shares one larger)."""
    base, extra = divmod(total, parts)
    start = index * base + min(index, extra)
    return start, start + base + (1 if index < extra else 0)


def _assign_operator(op: OperatorMetadata, snapshot_dir: str, new_parallelism: int) -> list[SubtaskRestore]:
    if not 0 < new_parallelism <= op.max_parallelism:
        raise RestoreError(
            f"cannot restore operator {op.uid or op.operator_id} at parallelism {new_parallelism}: "
            f"its max parallelism is {op.max_parallelism} (fixed when the state was created)"
        )
    if op.channel_states and new_parallelism != op.parallelism:
        # Flink redistributes in-flight data over virtual channels when rescaling; flott does not.
        raise NotYetSupportedError(
            f"cannot restore operator {op.uid or op.operator_id} at parallelism {new_parallelism} from an "
            f"unaligned checkpoint taken at parallelism {op.parallelism}: rescaling in-flight data is not "
            "supported; restore at the same parallelism, or rescale from a savepoint (always aligned)"
        )
    channel_files = {h.subtask_index: join(snapshot_dir, h.path) for h in op.channel_states}
    by_group = {h.key_group: h for h in op.key_groups}
    job_dir = shared_root(snapshot_dir)
    # Operator list state: number the elements of every SPLIT_DISTRIBUTE state across old subtasks.
    split_states: dict[str, list[tuple[str, int]]] = {}  # name -> [(file, count)] in subtask order
    own_split_states: dict[int, list[tuple[str, str, int]]] = {}  # old subtask -> [(file, name, count)]
    union_files: list[str] = []
    broadcast_copies: dict[str, list[tuple[str, int]]] = {}  # name -> [(file, count)] per old subtask
    for handle in op.operator_states:
        path = join(snapshot_dir, handle.path)
        has_union = False
        for name, info in handle.states.items():
            if info.mode == SPLIT_DISTRIBUTE:
                split_states.setdefault(name, []).append((path, info.count))
                own_split_states.setdefault(handle.subtask_index, []).append((path, name, info.count))
            elif info.mode == UNION:
                has_union = True
            elif info.mode == BROADCAST:
                broadcast_copies.setdefault(name, []).append((path, info.count))
            else:
                raise RestoreError(f"operator {op.operator_id}: unknown operator state mode {info.mode!r}")
        if has_union:
            union_files.append(path)
    # Unchanged parallelism: every subtask gets back the SPLIT_DISTRIBUTE elements it wrote, as with
    # Flink's round-robin repartitioner, which repartitions only when the parallelism changed (a
    # sink's committables so stay with the subtask whose transactions they are).
    unchanged = new_parallelism == op.parallelism
    pooled_split_states = {} if unchanged else split_states
    out = []
    for i in range(new_parallelism):
        kgr = compute_key_group_range_for_operator_index(op.max_parallelism, new_parallelism, i)
        files = [
            (g, join(snapshot_dir, by_group[g].path), by_group[g].offset, by_group[g].size)
            for g in kgr
            if g in by_group
        ]
        incremental = [
            (
                h.key_group_range,
                dict(h.state_names),
                dict(op.keyed_state_kinds),
                [(f.name, join(job_dir, f.path)) for f in h.shared]
                + [(f.name, join(snapshot_dir, f.path)) for f in h.private],
            )
            for h in op.incremental
            if h.key_group_range[0] <= kgr.end_key_group and kgr.start_key_group <= h.key_group_range[1]
        ]
        slices: list[OperatorStateSlice] = []
        if unchanged:
            slices += [OperatorStateSlice(p, name, 0, n) for p, name, n in own_split_states.get(i, [])]
        for name, pieces in pooled_split_states.items():
            total = sum(count for _, count in pieces)
            lo, hi = _split(total, new_parallelism, i)
            offset = 0
            for path, count in pieces:
                a, b = max(lo, offset), min(hi, offset + count)
                if a < b:
                    slices.append(OperatorStateSlice(path, name, a - offset, b - offset))
                offset += count
        for name, copies in broadcast_copies.items():
            path, count = copies[i % len(copies)]
            slices.append(OperatorStateSlice(path, name, 0, count))
        out.append(
            SubtaskRestore(
                operator_id=op.operator_id,
                subtask_index=i,
                parallelism=new_parallelism,
                max_parallelism=op.max_parallelism,
                key_group_range=kgr,
                key_group_files=files,
                keyed_state_kinds=dict(op.keyed_state_kinds),
                operator_state=slices,
                union_state_files=list(union_files),
                incremental=incremental,
                channel_state=channel_files.get(i),
            )
        )
    return out


def restore_assignment(
    metadata: CheckpointMetadata,
    new_parallelism: int | Mapping[str, int],
    snapshot_dir: str,
    *,
    allow_non_restored_state: bool = True,
) -> dict[str, list[SubtaskRestore]]:
    """Plan the restore of every operator in ``metadata`` at ``new_parallelism``.

    ``new_parallelism`` is one number for all operators, or a mapping from operator id *or* uid to
    parallelism (operators are matched by uid first, as Flink does). With a mapping and
    ``allow_non_restored_state=False``, an operator of the snapshot missing from the mapping is an
    error (Flink's ``allowNonRestoredState``). Result: operator id -> one :class:`SubtaskRestore` per
    new subtask, with absolute paths under ``snapshot_dir`` (where the snapshot is *now*).
    """
    out: dict[str, list[SubtaskRestore]] = {}
    for op in metadata.operators:
        if isinstance(new_parallelism, int):
            par: int | None = new_parallelism
        else:
            par = new_parallelism.get(op.uid) if op.uid is not None else None
            if par is None:
                par = new_parallelism.get(op.operator_id)
        if par is None:
            if not allow_non_restored_state:
                raise RestoreError(
                    f"the snapshot has state for operator {op.uid or op.operator_id} that the job does not "
                    "contain; set allowNonRestoredState to skip it"
                )
            continue
        out[op.operator_id] = _assign_operator(op, snapshot_dir.rstrip("/"), par)
    return out
