"""Incremental RocksDB checkpoints at the library level: the second checkpoint uploads only the
table files written since the first; a restore (same parallelism, or split over two subtasks of
either backend) reads back exactly the state of the checkpoint."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from flott.datastream.state import ValueStateDescriptor
from flott.runtime.checkpoint.incremental import IncrementalSnapshotter, restore_incremental
from flott.runtime.checkpoint.metadata import OperatorSubtaskState, merge_operator_states, shared_root
from flott.runtime.checkpoint.restore import _assign_operator
from flott.runtime.checkpoint.snapshot import restore_keyed_backend
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage, join
from flott.runtime.state.heap import HeapKeyedStateBackend
from flott.runtime.state.key_groups import KeyGroupRange
from flott.runtime.state.rocksdb import RocksDBKeyedStateBackend

MAX_PAR = 32
ALL = KeyGroupRange(0, MAX_PAR - 1)
COUNT = ValueStateDescriptor("count", None)


def _put(backend: Any, keys: range, value: Any) -> None:
    state = backend.get_value_state(COUNT)
    for k in keys:
        backend.set_current_key(k)
        state.update(value(k))
    backend.timer_queue("_timer_state/event_t").add(77, keys[0], None)


def _checkpoint(
    snapshotter: IncrementalSnapshotter, backend: Any, storage: Any, job_dir: str, cid: int
) -> OperatorSubtaskState:
    capture = snapshotter.capture(backend, cid, uid=None, name="count", operator_states=None)
    try:
        return capture.write(storage, join(job_dir, f"chk-{cid}"))
    finally:
        capture.release()


def _values(backend: Any, keys: range) -> dict[int, Any]:
    state = backend.get_value_state(COUNT)
    out = {}
    for k in keys:
        backend.set_current_key(k)
        out[k] = state.value()
    return out


def _restore(state: OperatorSubtaskState, job_dir: str, cid: int, parallelism: int, make: Any) -> list[Any]:
    storage = FsspecCheckpointStorage()
    (op,) = merge_operator_states([state])
    backends = []
    for r in _assign_operator(op, join(job_dir, f"chk-{cid}"), parallelism):
        b = make(r.key_group_range)
        restore_keyed_backend(storage, b, r.key_group_files)
        restore_incremental(storage, b, r.incremental)
        backends.append(b)
    return backends


def test_the_second_checkpoint_uploads_only_what_changed_and_restores_exactly(tmp_path: Path) -> None:
    storage = FsspecCheckpointStorage()
    job_dir = str(tmp_path / "checkpoints" / "job")
    backend = RocksDBKeyedStateBackend(MAX_PAR, ALL, local_dir=str(tmp_path / "db"), cache_entries=100)
    keys = range(20_000)
    try:
        _put(backend, keys, lambda k: "x" * 40 + str(k))
        snapshotter = IncrementalSnapshotter("op", 0, 1)
        first = _checkpoint(snapshotter, backend, storage, job_dir, 1)
        assert first.incremental is not None and first.incremental.shared
        assert all(f.checkpoint_id == 1 for f in first.incremental.shared)
        assert shared_root(join(job_dir, "chk-1")) == job_dir
        snapshotter.notify_complete(1)
        changed = range(0, 200)  # 1 %
        _put(backend, changed, lambda k: "changed")
        second = _checkpoint(snapshotter, backend, storage, job_dir, 2)
        assert second.incremental is not None
        reused = [f for f in second.incremental.shared if f.checkpoint_id == 1]
        new = [f for f in second.incremental.shared if f.checkpoint_id == 2]
        assert reused and new
        assert second.checkpointed_size(2) < second.state_size / 5
        assert {f.path for f in first.incremental.shared} >= {f.path for f in reused}
        assert all(os.path.exists(join(job_dir, f.path)) for f in second.incremental.shared)
        expected = _values(backend, keys)
        assert expected[5] == "changed" and expected[500] == "x" * 40 + "500"
        _put(backend, keys, lambda k: "after the checkpoint")
        (same,) = _restore(second, job_dir, 2, 1, lambda r: HeapKeyedStateBackend(MAX_PAR, r))
        assert _values(same, keys) == expected
        assert len(same.timer_queue("_timer_state/event_t")) == 1
        made: list[Any] = []

        def rocks(r: KeyGroupRange) -> Any:
            made.append(RocksDBKeyedStateBackend(MAX_PAR, r, local_dir=str(tmp_path / "db2")))
            return made[-1]

        halves = _restore(second, job_dir, 2, 2, rocks)
        merged: dict[int, Any] = {}
        for half in halves:
            merged.update({k: v for k, v in _values(half, keys).items() if v is not None})
        assert merged == expected
        for b in made:
            b.dispose()
    finally:
        backend.dispose()


def test_an_aborted_checkpoint_is_never_the_base_and_a_cancelled_writer_leaves_no_shared_file(
    tmp_path: Path,
) -> None:
    storage = FsspecCheckpointStorage()
    job_dir = str(tmp_path / "job")
    backend = RocksDBKeyedStateBackend(MAX_PAR, ALL, local_dir=str(tmp_path / "db"))
    try:
        _put(backend, range(1000), str)
        snapshotter = IncrementalSnapshotter("op", 0, 1)
        _checkpoint(snapshotter, backend, storage, job_dir, 1)
        snapshotter.notify_aborted(1)
        second = _checkpoint(snapshotter, backend, storage, job_dir, 2)
        assert second.incremental is not None
        assert all(f.checkpoint_id == 2 for f in second.incremental.shared)
        capture = snapshotter.capture(backend, 3, uid=None, name="count", operator_states=None)
        capture.write(storage, join(job_dir, "chk-3"))
        capture.cleanup(storage)
        assert capture.shared_written
        assert not any(os.path.exists(join(job_dir, p)) for p in capture.shared_written)
        assert not os.path.exists(capture.local_dir)
    finally:
        backend.dispose()
