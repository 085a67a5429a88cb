"""The synchronous part of a checkpoint captures the state as of the barrier: whatever records do
to the state after it (in-place list appends, accumulators, updates, deletions, new keys, new
timers) never reaches the files the asynchronous part writes afterwards, on either backend."""

from __future__ import annotations

import pickle
import threading
from pathlib import Path
from typing import Any

from flott.runtime.checkpoint.snapshot import capture_keyed_backend, key_group_blobs, restore_keyed_backend
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage, join
from flott.runtime.state.heap import HeapKeyedStateBackend
from flott.runtime.state.rocksdb import RocksDBKeyedStateBackend
from tests.state.test_cross_backend_restore import ALL, DESCRIPTORS, KEYS, MAX_PAR, fill, state_of


def _change_everything(backend: Any) -> None:
    value = backend.get_value_state(DESCRIPTORS["value"])
    lst = backend.get_list_state(DESCRIPTORS["list"])
    mp = backend.get_map_state(DESCRIPTORS["map"])
    agg = backend.get_aggregating_state(DESCRIPTORS["aggregating"])
    window_list = backend.get_namespaced_list_state(DESCRIPTORS["window-list"])
    for n, key in enumerate(KEYS):
        backend.set_current_key(key)
        if n % 2:
            value.clear()
        else:
            value.update("changed")
        lst.add("appended")
        mp.put("new", 1)
        agg.add(1000)
        backend.current_namespace = next(iter(backend.namespaced_table("window-list", "list")[key]))
        window_list.add("late")
    backend.set_current_key("a key born after the barrier")
    value.update(1)
    backend.timer_queue("_timer_state/processing_user-timers").add(99, "x", None)


def _roundtrip(backend: Any, tmp_path: Path, restored: Any) -> None:
    fill(backend)
    expected = state_of(backend)
    storage = FsspecCheckpointStorage()
    directory = join(str(tmp_path), "chk-1")
    capture = capture_keyed_backend(backend, operator_id="op", subtask_index=0, parallelism=1)
    _change_everything(backend)
    written: list[str] = []
    # The writer runs on another thread, as the asynchronous part does.
    result: dict[str, Any] = {}
    t = threading.Thread(target=lambda: result.update(s=capture.write(storage, directory, None, written)))
    t.start()
    t.join(60)
    capture.release()
    subtask = result["s"]
    assert sorted(written) == sorted({h.path for h in subtask.key_groups})  # one file of key groups
    restore_keyed_backend(storage, restored, key_group_blobs(directory, subtask.key_groups))
    assert state_of(restored) == expected
    assert state_of(backend) != expected


def test_heap_capture_is_not_changed_by_later_records(tmp_path: Path) -> None:
    _roundtrip(HeapKeyedStateBackend(MAX_PAR, ALL), tmp_path, HeapKeyedStateBackend(MAX_PAR, ALL))


def test_rocksdb_capture_is_a_native_checkpoint_not_changed_by_later_records(tmp_path: Path) -> None:
    backend = RocksDBKeyedStateBackend(MAX_PAR, ALL, local_dir=str(tmp_path / "db"), cache_entries=4)
    try:
        _roundtrip(backend, tmp_path, HeapKeyedStateBackend(MAX_PAR, ALL))
        assert not [p for p in Path(backend.working_dir).iterdir() if p.name.startswith("chk-")]
    finally:
        backend.dispose()


def test_flat_tuple_values_are_shared_and_tuples_holding_lists_are_copied_deeply() -> None:
    from flott.runtime.state.heap.heap_snapshot import capture_table

    flat = {"a": ("a", 1), "b": ("b", 2.5, None, b"x")}
    captured = capture_table(flat)
    assert isinstance(captured, dict) and captured == flat and captured is not flat
    flat["a"] = ("a", 2)  # a reduce replaces its tuple: the capture keeps the value of the barrier
    assert captured["a"] == ("a", 1)

    holding_list = {"a": ("a", [1])}
    deep = capture_table(holding_list)
    holding_list["a"][1].append(2)  # an in-place change after the barrier
    assert isinstance(deep, bytes) and pickle.loads(deep) == {"a": ("a", [1])}

    nested = {"a": (("x", 1), 2)}  # a tuple inside a tuple is not checked deeper: pickled
    assert isinstance(capture_table(nested), bytes)


def test_successive_heap_checkpoints_follow_new_and_removed_keys(tmp_path: Path) -> None:
    """The heap backend keeps each state's keys per key group from one checkpoint to the next
    (heap_snapshot.KeyGroupIndex); keys added, removed, removed and re-added between checkpoints
    still land in the right key-group files with the values of their own barrier."""
    from flott.runtime.state.key_groups import assign_to_key_group

    backend = HeapKeyedStateBackend(MAX_PAR, ALL)
    table = backend.state_table("counts", "value")
    storage = FsspecCheckpointStorage()
    for k in range(300):
        table[k] = (k, 0)
    rounds = [
        lambda: None,  # the same keys, new values only
        lambda: [table.pop(k) for k in range(0, 300, 3)],  # removals (whole key groups among them)
        lambda: table.update({f"new-{k}": (k, 1) for k in range(50)}),  # new keys
        lambda: [table.pop(k) for k in range(1, 40, 3)] and table.update({1: (1, 99)}),  # both
        lambda: table.clear(),
    ]
    for n, change in enumerate(rounds):
        change()
        for k in list(table)[::2]:
            table[k] = (table[k][0], n)
        expected = dict(table)
        directory = join(str(tmp_path), f"chk-{n}")
        capture = capture_keyed_backend(backend, operator_id="op", subtask_index=0, parallelism=1)
        table["after the barrier"] = ("x", -1)
        subtask = capture.write(storage, directory)
        table.pop("after the barrier")
        for handle in subtask.key_groups:
            restored = HeapKeyedStateBackend(MAX_PAR, ALL)
            restore_keyed_backend(storage, restored, key_group_blobs(directory, [handle]))
            keys = restored.state_table("counts", "value")
            assert {assign_to_key_group(k, MAX_PAR) for k in keys} == {handle.key_group}
        restored = HeapKeyedStateBackend(MAX_PAR, ALL)
        restore_keyed_backend(storage, restored, key_group_blobs(directory, subtask.key_groups))
        assert dict(restored.state_table("counts", "value")) == expected
        assert backend.entries_by_key_group("counts") == {
            g: {k: v for k, v in expected.items() if assign_to_key_group(k, MAX_PAR) == g}
            for g in {assign_to_key_group(k, MAX_PAR) for k in expected}
        }
