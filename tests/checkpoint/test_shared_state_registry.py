"""Shared files of incremental checkpoints: counted per retained checkpoint, deleted (as actions)
only when the last retained checkpoint using them is subsumed; rebuilt from a restored checkpoint."""

from __future__ import annotations

from typing import Any

from flott.runtime.checkpoint.coordinator import (
    AcknowledgeCheckpoint,
    CheckpointCoordinator,
    CheckpointFailed,
    DeclineCheckpoint,
    DiscardCheckpoint,
    JobRunning,
    RestoredFrom,
    Tick,
)
from flott.runtime.checkpoint.metadata import (
    IncrementalKeyedStateHandle,
    OperatorSubtaskState,
    PrivateFileHandle,
    SharedFileHandle,
    TaskStateSnapshot,
    load_metadata,
)
from flott.runtime.checkpoint.shared_state_registry import SharedStateRegistry
from tests.checkpoint.test_coordinator import JOB, PLAN, make, triggered


def test_a_file_is_deleted_only_when_its_last_retained_checkpoint_goes() -> None:
    r = SharedStateRegistry()
    r.register(1, ["shared/a", "shared/b"])
    r.register(2, ["shared/b", "shared/c"])
    r.register(2, ["shared/b"])  # idempotent
    assert r.references("shared/b") == {1, 2}
    assert r.unregister(1, ["shared/a", "shared/b"]) == ["shared/a"]
    assert r.unregister(2, ["shared/b", "shared/c"]) == ["shared/b", "shared/c"]
    assert len(r) == 0
    assert r.unregister(3, ["shared/never"]) == []


def test_a_failed_checkpoints_uploads_are_those_nobody_registered() -> None:
    r = SharedStateRegistry()
    r.register(1, ["shared/a"])
    assert r.unreferenced(["shared/a", "shared/new", "shared/new"]) == ["shared/new"]


def _incremental(cid: int, sub: int, files: dict[str, int]) -> TaskStateSnapshot:
    """A map subtask's acknowledgement with shared files ``{name: uploaded by checkpoint}``."""
    return TaskStateSnapshot([
        OperatorSubtaskState(
            operator_id="map", subtask_index=sub, parallelism=2, max_parallelism=128,
            key_group_range=(0, 63) if sub == 0 else (64, 127), keyed_state_kinds={"count": "value"},
            incremental=IncrementalKeyedStateHandle(
                backend_id=f"b{sub}", key_group_range=(0, 63) if sub == 0 else (64, 127),
                state_names={"0": "count"},
                shared=[SharedFileHandle(n, f"shared/b{sub}-{n}", 1000, by) for n, by in files.items()],
                private=[PrivateFileHandle("MANIFEST", f"op-map/db-{sub:05d}/MANIFEST", 10)],
            ),
        )
    ])  # fmt: skip


def _checkpoint(coord: CheckpointCoordinator, now: int, files: dict[str, int], cid: int) -> list[Any]:
    triggered(coord.handle(Tick(), now))
    actions: list[Any] = coord.handle(AcknowledgeCheckpoint(cid, "src-0", TaskStateSnapshot()), now)
    actions += coord.handle(AcknowledgeCheckpoint(cid, "map-0", _incremental(cid, 0, files)), now)
    actions += coord.handle(AcknowledgeCheckpoint(cid, "map-1", _incremental(cid, 1, files)), now)
    return actions


def _discards(actions: list[Any]) -> list[DiscardCheckpoint]:
    return [a for a in actions if isinstance(a, DiscardCheckpoint)]


def test_subsuming_deletes_the_shared_files_no_retained_checkpoint_uses() -> None:
    coord, storage = make(num_retained=1)
    coord.handle(JobRunning(PLAN), 0)
    _checkpoint(coord, 1000, {"1.sst": 1, "2.sst": 1}, 1)
    assert coord.shared.references("shared/b0-1.sst") == {1}
    actions = _checkpoint(coord, 2000, {"2.sst": 1, "3.sst": 2}, 2)  # 1.sst compacted away
    (discard,) = _discards(actions)
    assert discard.checkpoint_id == 1
    assert sorted(discard.shared_files) == ["shared/b0-1.sst", "shared/b1-1.sst"]
    assert coord.shared.references("shared/b0-2.sst") == {2}  # still referenced: kept
    stats = coord.checkpoint_statistics()["latest"]["completed"]
    assert stats["state_size"] == 2 * (2000 + 10)
    assert stats["checkpointed_size"] == 2 * (1000 + 10)  # only 3.sst was new
    meta = load_metadata(storage, "/chk/" + JOB + "/chk-2")
    assert sorted(meta.shared_files()) == [
        "shared/b0-2.sst", "shared/b0-3.sst", "shared/b1-2.sst", "shared/b1-3.sst"
    ]


def test_with_two_retained_a_file_lives_until_both_are_subsumed() -> None:
    coord, _ = make(num_retained=2)
    coord.handle(JobRunning(PLAN), 0)
    _checkpoint(coord, 1000, {"1.sst": 1}, 1)
    _checkpoint(coord, 2000, {"1.sst": 1, "2.sst": 2}, 2)
    assert _discards(_checkpoint(coord, 3000, {"2.sst": 2}, 3))[0].shared_files == ()  # 1 still in 2
    (discard,) = _discards(_checkpoint(coord, 4000, {"4.sst": 4}, 4))
    assert discard.checkpoint_id == 2
    assert sorted(discard.shared_files) == ["shared/b0-1.sst", "shared/b1-1.sst"]


def test_a_failed_checkpoint_deletes_its_own_uploads_but_never_a_registered_file() -> None:
    coord, _ = make(num_retained=1)
    coord.handle(JobRunning(PLAN), 0)
    _checkpoint(coord, 1000, {"1.sst": 1}, 1)
    triggered(coord.handle(Tick(), 2000))
    coord.handle(AcknowledgeCheckpoint(2, "map-0", _incremental(2, 0, {"1.sst": 1, "9.sst": 2})), 2000)
    actions = coord.handle(DeclineCheckpoint(2, "map-1", "disk full"), 2000)
    (discard,) = _discards(actions)
    assert discard.shared_files == ("shared/b0-9.sst",)
    assert coord.shared.is_registered("shared/b0-1.sst")


def test_a_checkpoint_reusing_a_file_that_is_gone_fails_instead_of_completing() -> None:
    coord, _ = make(num_retained=1)
    coord.handle(JobRunning(PLAN), 0)
    _checkpoint(coord, 1000, {"1.sst": 1}, 1)
    actions = _checkpoint(coord, 2000, {"7.sst": 5}, 2)  # claims a file of a checkpoint never retained
    (failed,) = [a for a in actions if isinstance(a, CheckpointFailed)]
    assert "no retained checkpoint holds" in failed.reason
    assert coord.latest_completed() is not None and coord.latest_completed().checkpoint_id == 1


def test_a_new_leader_rebuilds_the_registry_from_the_checkpoint_it_restores() -> None:
    old, storage = make(num_retained=1)
    old.handle(JobRunning(PLAN), 0)
    _checkpoint(old, 1000, {"1.sst": 1, "2.sst": 1}, 1)
    meta = load_metadata(storage, "/chk/" + JOB + "/chk-1")
    new, _ = make(num_retained=1)
    new.storage = storage
    new.handle(RestoredFrom(1, "/chk/" + JOB + "/chk-1", False, meta), 0)
    assert new.shared.references("shared/b0-1.sst") == {1}
    new.handle(JobRunning(PLAN), 0)
    # The restored tasks reuse nothing (their base is empty): checkpoint 2 uploads anew.
    (discard,) = _discards(_checkpoint(new, 1000, {"5.sst": 2}, 2))
    assert discard.checkpoint_id == 1 and len(discard.shared_files) == 4


def test_a_savepoint_or_another_jobs_checkpoint_is_never_adopted() -> None:
    old, storage = make(num_retained=1)
    old.handle(JobRunning(PLAN), 0)
    _checkpoint(old, 1000, {"1.sst": 1}, 1)
    meta = load_metadata(storage, "/chk/" + JOB + "/chk-1")
    other = CheckpointCoordinator("f" * 32, old.config)
    other.handle(RestoredFrom(1, "/chk/" + JOB + "/chk-1", False, meta), 0)
    assert other.completed == [] and len(other.shared) == 0


def test_a_new_leader_retains_the_older_checkpoints_too_and_discards_those_beyond_num_retained() -> None:
    old, storage = make(num_retained=2)
    old.handle(JobRunning(PLAN), 0)
    _checkpoint(old, 1000, {"1.sst": 1}, 1)
    _checkpoint(old, 2000, {"1.sst": 1, "2.sst": 2}, 2)
    _checkpoint(old, 3000, {"3.sst": 3}, 3)  # the old leader disposed of chk-1 already
    metas = {c: load_metadata(storage, f"/chk/{JOB}/chk-{c}") for c in (2, 3)}
    new, _ = make(num_retained=1)
    new.storage = storage
    actions = new.handle(
        RestoredFrom(3, f"/chk/{JOB}/chk-3", False, metas[3], ((metas[2], f"/chk/{JOB}/chk-2"),)), 0
    )
    (discard,) = _discards(actions)
    assert discard.checkpoint_id == 2
    assert sorted(discard.shared_files) == [
        "shared/b0-1.sst", "shared/b0-2.sst", "shared/b1-1.sst", "shared/b1-2.sst"
    ]
    assert [c.checkpoint_id for c in new.completed] == [3]
    assert new.shared.references("shared/b0-3.sst") == {3}
