"""Broadcast state in snapshots: every subtask writes its copy; a restore at any parallelism gives
every new subtask one whole copy, new subtask ``i`` reading old subtask ``i mod old parallelism``."""

from __future__ import annotations

from pathlib import Path

import pytest

from flott.runtime.checkpoint.metadata import (
    BROADCAST,
    SPLIT_DISTRIBUTE,
    CheckpointMetadata,
    OperatorSubtaskState,
    merge_operator_states,
)
from flott.runtime.checkpoint.restore import restore_assignment
from flott.runtime.checkpoint.snapshot import read_operator_state, write_operator_state
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage

OLD_PARALLELISM = 3


def broadcast_snapshot(tmp_path: Path) -> tuple[CheckpointMetadata, FsspecCheckpointStorage]:
    """Three subtasks of one operator; each copy is tagged with its subtask so a test can see which
    copy a new subtask reads (real copies are equal). Each also has a SPLIT_DISTRIBUTE state."""
    storage = FsspecCheckpointStorage()
    states = []
    for i in range(OLD_PARALLELISM):
        rules = [("rule-a", 1), ("rule-b", 2), ("copy", i)]
        handle = write_operator_state(
            storage,
            str(tmp_path),
            "op",
            i,
            {"rules": (BROADCAST, rules), "empty": (BROADCAST, []), "pending": (SPLIT_DISTRIBUTE, [i])},
        )
        states.append(OperatorSubtaskState("op", i, OLD_PARALLELISM, 128, operator_state=handle))
    meta = CheckpointMetadata("j" * 32, 1, 0, True, "SAVEPOINT", merge_operator_states(states))
    return meta, storage


@pytest.mark.parametrize("parallelism", [1, 2, 3, 5, 7])
def test_every_new_subtask_restores_one_whole_copy_round_robin(tmp_path: Path, parallelism: int) -> None:
    meta, storage = broadcast_snapshot(tmp_path)
    assert meta.operator("op").state_sizes() == {"rules": 9, "empty": 0, "pending": 3}
    plan = restore_assignment(meta, parallelism, str(tmp_path))["op"]
    pending: list[int] = []
    for sub in plan:
        by_name: dict[str, list[object]] = {}
        for sl in sub.operator_state:
            elements = read_operator_state(storage, sl.path)[sl.state_name][sl.start : sl.end]
            by_name.setdefault(sl.state_name, []).extend(elements)
        copy = sub.subtask_index % OLD_PARALLELISM
        assert by_name["rules"] == [("rule-a", 1), ("rule-b", 2), ("copy", copy)]
        assert by_name.get("empty", []) == []
        pending += by_name.get("pending", [])  # type: ignore[arg-type]
    assert sorted(pending) == [0, 1, 2], "split state is still split, each element once"


def test_an_unknown_mode_is_refused_when_written(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown operator state mode"):
        write_operator_state(FsspecCheckpointStorage(), str(tmp_path), "op", 0, {"x": ("BROADCASTED", [])})
