"""The snapshot format on a real filesystem (fsspec): round trips, relocation, rescaling, corruption."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest

from flott.runtime.checkpoint.coordinator import (
    AcknowledgeCheckpoint,
    CheckpointCompleted,
    CheckpointConfig,
    CheckpointCoordinator,
    CheckpointPlan,
    JobRunning,
    TriggerCheckpointBarrier,
    TriggerSavepoint,
    WriteCheckpointMetadata,
    perform_storage_action,
)
from flott.runtime.checkpoint.errors import RestoreError, SnapshotFormatError
from flott.runtime.checkpoint.metadata import (
    FORMAT_VERSION,
    METADATA_FILE,
    SPLIT_DISTRIBUTE,
    UNION,
    CheckpointMetadata,
    OperatorSubtaskState,
    TaskStateSnapshot,
    decode_metadata,
    encode_metadata,
    load_metadata,
    merge_operator_states,
)
from flott.runtime.checkpoint.restore import restore_assignment
from flott.runtime.checkpoint.snapshot import (
    read_key_group,
    read_operator_state,
    restore_heap_backend,
    snapshot_heap_backend,
    write_operator_state,
)
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage
from flott.runtime.state.heap import HeapKeyedStateBackend
from flott.runtime.state.key_groups import KeyGroupRange, assign_to_key_group

MAX_PAR = 128
KEYS = [f"user-{i}" for i in range(500)] + list(range(300)) + [("t", i) for i in range(50)]


def expected_counts() -> dict[Any, int]:
    return {k: i + 1 for i, k in enumerate(KEYS)}


def take_savepoint(tmp_path: Path, parallelism: int = 2) -> tuple[str, FsspecCheckpointStorage]:
    """A job with a keyed 'counter' operator at ``parallelism`` and a source with offsets: savepoint it
    through the coordinator the way tasks will (each subtask writes its files, then acknowledges)."""
    storage = FsspecCheckpointStorage()
    tasks = {f"src-{i}": "src" for i in range(parallelism)} | {f"cnt-{i}": "cnt" for i in range(parallelism)}
    coord = CheckpointCoordinator("f" * 32, CheckpointConfig())
    coord.handle(JobRunning(CheckpointPlan(tuple(t for t in tasks if t.startswith("src")), tasks)), 0)
    (barrier,) = coord.handle(TriggerSavepoint(str(tmp_path / "sp")), 1)
    assert isinstance(barrier, TriggerCheckpointBarrier)
    counts = expected_counts()
    actions: list[Any] = []
    for i in range(parallelism):
        # Source subtask i: its split offsets as operator list state, plus a union state.
        handle = write_operator_state(
            storage, barrier.location, "source", i,
            {"offsets": (SPLIT_DISTRIBUTE, [(f"split-{i}-{j}", j * 10) for j in range(3)]),
             "watermark": (UNION, [i * 100])},
        )  # fmt: skip
        src = OperatorSubtaskState("source", i, parallelism, MAX_PAR, uid="my-source", operator_state=handle)
        actions += coord.handle(
            AcknowledgeCheckpoint(barrier.checkpoint_id, f"src-{i}", TaskStateSnapshot([src])), 2
        )
        # Keyed subtask i: a heap backend holding the counts of its key groups.
        kgr = KeyGroupRange.of_operator(MAX_PAR, parallelism, i)
        backend = HeapKeyedStateBackend(MAX_PAR, kgr)
        table = backend.state_table("count", "value")
        seen = backend.state_table("seen", "list")
        for key, n in counts.items():
            if assign_to_key_group(key, MAX_PAR) in kgr:
                table[key] = n
                seen[key] = [n]
        sub = snapshot_heap_backend(
            storage, barrier.location, backend, operator_id="counter", subtask_index=i,
            parallelism=parallelism, uid="my-counter", name="Counter",
        )  # fmt: skip
        actions += coord.handle(
            AcknowledgeCheckpoint(barrier.checkpoint_id, f"cnt-{i}", TaskStateSnapshot([sub])), 3
        )
    (write,) = [a for a in actions if isinstance(a, WriteCheckpointMetadata)]
    actions = coord.handle(perform_storage_action(storage, write), 4)  # what the JobMaster's shell does
    (done,) = [a for a in actions if isinstance(a, CheckpointCompleted)]
    return done.external_path, storage


def restore_counts(storage: FsspecCheckpointStorage, snapshot_dir: str, parallelism: int) -> dict[Any, int]:
    meta = load_metadata(storage, snapshot_dir)
    plan = restore_assignment(meta, parallelism, snapshot_dir)
    restored: dict[Any, int] = {}
    for sub in plan["counter"]:
        backend = HeapKeyedStateBackend(sub.max_parallelism, sub.key_group_range)
        restore_heap_backend(storage, backend, sub.key_group_files)
        for key, value in backend.state_table("count", "value").items():
            assert key not in restored, f"{key} restored twice"
            restored[key] = value
        assert dict(backend.state_table("seen", "list")) == {
            k: [v] for k, v in backend.state_table("count", "value").items()
        }
    return restored


def test_metadata_round_trip(tmp_path: Path) -> None:
    path, storage = take_savepoint(tmp_path)
    meta = load_metadata(storage, path)
    assert meta.format_version == FORMAT_VERSION and meta.is_savepoint and meta.checkpoint_type == "SAVEPOINT"
    assert decode_metadata(encode_metadata(meta)) == meta
    assert load_metadata(storage, path + "/" + METADATA_FILE) == meta  # the file path works too
    counter = meta.operator("my-counter")  # by uid
    assert (
        counter.operator_id == "counter" and counter.parallelism == 2 and counter.max_parallelism == MAX_PAR
    )
    assert counter.keyed_state_kinds == {"count": "value", "seen": "list"}
    assert counter.state_sizes() == {"count": len(KEYS), "seen": len(KEYS)}
    assert all(not h.path.startswith("/") for h in counter.key_groups)  # relative: relocatable
    assert meta.operator("source").state_sizes() == {"offsets": 6, "watermark": 2}
    assert meta.state_size > 0
    group = counter.key_groups[0]
    state = read_key_group(storage, f"{path}/{group.path}", group.offset, group.size)
    assert set(state) == {"count", "seen"} and len(state["count"][1]) == group.entries["count"]
    # No temporary files left behind by the atomic writes.
    assert not [p for p in Path(path).rglob("*") if "inprogress" in p.name]


@pytest.mark.parametrize("parallelism", [1, 2, 3, 4])
def test_restore_at_other_parallelism_gives_every_key_group_once(tmp_path: Path, parallelism: int) -> None:
    path, storage = take_savepoint(tmp_path, parallelism=2)
    meta = load_metadata(storage, path)
    plan = restore_assignment(meta, parallelism, path)
    subs = plan["counter"]
    assert [s.subtask_index for s in subs] == list(range(parallelism))
    covered = [g for s in subs for g in s.key_group_range]
    assert covered == list(range(MAX_PAR))  # every key group exactly once, in order
    files = [g for s in subs for g, *_ in s.key_group_files]
    assert files == [h.key_group for h in meta.operator("counter").key_groups]
    assert restore_counts(storage, path, parallelism) == expected_counts()
    # Operator state: SPLIT_DISTRIBUTE elements each exactly once, UNION everywhere.
    offsets: list[Any] = []
    for s in plan["source"]:
        for sl in s.operator_state:
            offsets += read_operator_state(storage, sl.path)[sl.state_name][sl.start : sl.end]
        union = [w for f in s.union_state_files for w in read_operator_state(storage, f)["watermark"]]
        assert sorted(union) == [0, 100]
    assert sorted(offsets) == sorted((f"split-{i}-{j}", j * 10) for i in range(2) for j in range(3))


def test_moved_savepoint_still_restores(tmp_path: Path) -> None:
    path, storage = take_savepoint(tmp_path / "a")
    moved = tmp_path / "elsewhere" / "renamed-savepoint"
    moved.parent.mkdir(parents=True)
    shutil.move(path, moved)
    assert restore_counts(storage, str(moved), 4) == expected_counts()
    assert restore_counts(storage, f"file://{moved}", 1) == expected_counts()  # any fsspec URL


def test_format_1_snapshots_a_file_per_key_group_still_restore(tmp_path: Path) -> None:
    """Format 2 keeps a subtask's key groups in one file at offsets; a snapshot of format 1 (one
    ``kg-<n>.bin`` per key group, handles without an offset) restores as before, rescaled too."""
    path, storage = take_savepoint(tmp_path)
    meta = load_metadata(storage, path)
    assert meta.format_version == FORMAT_VERSION == 2
    counter = meta.operator("counter")
    assert len({h.path for h in counter.key_groups}) == 2  # one file per subtask, not per key group
    old_ops = []
    for op in meta.operators:
        handles = []
        for h in op.key_groups:
            blob = (Path(path) / h.path).read_bytes()[h.offset : h.offset + h.size]
            rel = f"op-{op.operator_id}/kg-{h.key_group:05d}.bin"
            (Path(path) / rel).write_bytes(blob)
            handles.append(msgspec.structs.replace(h, path=rel, offset=-1))
        old_ops.append(msgspec.structs.replace(op, key_groups=handles))
    for f in Path(path).rglob("keyed-*.bin"):
        f.unlink()
    old = msgspec.structs.replace(meta, operators=old_ops, format_version=1)
    (Path(path) / METADATA_FILE).write_bytes(encode_metadata(old).replace(b',"offset":-1', b""))
    assert b'"offset"' not in (Path(path) / METADATA_FILE).read_bytes()
    for parallelism in (1, 3):
        assert restore_counts(storage, path, parallelism) == expected_counts()


def test_restore_plan_by_uid_and_allow_non_restored_state(tmp_path: Path) -> None:
    path, storage = take_savepoint(tmp_path)
    meta = load_metadata(storage, path)
    plan = restore_assignment(meta, {"my-counter": 3}, path)
    assert list(plan) == ["counter"] and len(plan["counter"]) == 3
    with pytest.raises(RestoreError, match="allowNonRestoredState"):
        restore_assignment(meta, {"my-counter": 3}, path, allow_non_restored_state=False)
    with pytest.raises(RestoreError, match="max parallelism"):
        restore_assignment(meta, MAX_PAR + 1, path)


def test_missing_or_corrupt_metadata_is_a_clear_error(tmp_path: Path) -> None:
    storage = FsspecCheckpointStorage()
    with pytest.raises(SnapshotFormatError, match="does not exist"):
        load_metadata(storage, str(tmp_path / "nope"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(SnapshotFormatError, match="no _metadata"):
        load_metadata(storage, str(tmp_path / "empty"))
    path, storage = take_savepoint(tmp_path / "x")
    meta_file = Path(path) / METADATA_FILE
    good = meta_file.read_bytes()
    meta_file.write_bytes(good[: len(good) // 2])
    with pytest.raises(SnapshotFormatError, match="corrupt snapshot metadata"):
        load_metadata(storage, path)
    meta_file.write_bytes(b'{"format": "something-else"}')
    with pytest.raises(SnapshotFormatError, match="not a flott snapshot"):
        load_metadata(storage, path)
    meta_file.write_bytes(good.replace(b'"format_version":2', b'"format_version":99'))
    with pytest.raises(SnapshotFormatError, match="format version 99"):
        load_metadata(storage, path)
    meta_file.write_bytes(good)
    # A corrupted or missing state file is caught by the checksum / existence check.
    meta = load_metadata(storage, path)
    kg = Path(path) / meta.operator("counter").key_groups[0].path
    data = bytearray(kg.read_bytes())
    data[-1] ^= 0xFF
    kg.write_bytes(bytes(data))
    with pytest.raises(SnapshotFormatError, match="checksum"):
        restore_counts(storage, path, 2)
    kg.unlink()
    with pytest.raises(SnapshotFormatError, match="missing snapshot file"):
        restore_counts(storage, path, 2)


def test_merge_rejects_inconsistent_subtasks() -> None:
    with pytest.raises(SnapshotFormatError, match="parallelism"):
        merge_operator_states([OperatorSubtaskState("op", 0, 2, 128), OperatorSubtaskState("op", 1, 3, 128)])
    meta = CheckpointMetadata("j", 1, 0, False, "CHECKPOINT", merge_operator_states([]))
    assert meta.operators == []


def _elements(storage: FsspecCheckpointStorage, sl: Any) -> list[Any]:
    return list(read_operator_state(storage, sl.path)[sl.state_name][sl.start : sl.end])


def test_split_distribute_state_stays_with_its_subtask_at_an_unchanged_parallelism(tmp_path: Path) -> None:
    """As Flink's round-robin repartitioner: at the same parallelism every subtask gets back the
    elements it wrote (a transactional sink's committables name its own transactions, which a
    neighbour must not fence); only a new parallelism pools and splits them."""
    storage = FsspecCheckpointStorage()
    location = str(tmp_path / "chk-1")
    written = {0: ["t-0-3"], 1: ["t-1-2", "t-1-3", "t-1-4"]}
    subtasks = []
    for i, committables in written.items():
        states = {"committables": (SPLIT_DISTRIBUTE, committables)}
        handle = write_operator_state(storage, location, "sink", i, states)
        subtasks.append(OperatorSubtaskState("sink", i, 2, MAX_PAR, uid="kafka-out", operator_state=handle))
    meta = CheckpointMetadata("j", 1, 0, False, "CHECKPOINT", merge_operator_states(subtasks))

    def restored(parallelism: int) -> list[list[str]]:
        plan = restore_assignment(meta, parallelism, location)
        return [
            [c for sl in s.operator_state for c in _elements(storage, sl)]
            for s in plan["sink"]
        ]

    assert restored(2) == [["t-0-3"], ["t-1-2", "t-1-3", "t-1-4"]]
    assert restored(3) == [["t-0-3", "t-1-2"], ["t-1-3"], ["t-1-4"]]
