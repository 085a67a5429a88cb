"""The snapshot format is the backends' common language: heap -> RocksDB -> heap keeps every value,
list, map, namespaced state and timer, and both backends write the same key-group contents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flott.datastream.functions import AggregateFunction
from flott.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from flott.datastream.window import TimeWindow
from flott.runtime.checkpoint.snapshot import (
    key_group_blobs,
    read_key_group,
    restore_heap_backend,
    restore_keyed_backend,
    snapshot_heap_backend,
    snapshot_keyed_backend,
)
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage
from flott.runtime.state.heap import HeapKeyedStateBackend
from flott.runtime.state.key_groups import KeyGroupRange
from flott.runtime.state.rocksdb import RocksDBKeyedStateBackend

MAX_PAR = 64
ALL = KeyGroupRange(0, MAX_PAR - 1)


class Sum(AggregateFunction):
    def create_accumulator(self) -> Any:
        return 0

    def add(self, value: Any, acc: Any) -> Any:
        return acc + value

    def get_result(self, acc: Any) -> Any:
        return acc

    def merge(self, a: Any, b: Any) -> Any:
        return a + b


DESCRIPTORS = {
    "value": ValueStateDescriptor("value", None),
    "list": ListStateDescriptor("list", None),
    "map": MapStateDescriptor("map", None, None),
    "reducing": ReducingStateDescriptor("reducing", lambda a, b: a + b, None),
    "aggregating": AggregatingStateDescriptor("aggregating", Sum(), None),
    "window-list": ListStateDescriptor("window-list", None),
    "window-value": ValueStateDescriptor("window-value", None),
}
KEYS: list[Any] = [*(f"user-{i}" for i in range(60)), *range(30), ("tuple", 1), 2.5, b"raw"]


def fill(backend: Any) -> None:
    s = {name: None for name in DESCRIPTORS}
    s["value"] = backend.get_value_state(DESCRIPTORS["value"])
    s["list"] = backend.get_list_state(DESCRIPTORS["list"])
    s["map"] = backend.get_map_state(DESCRIPTORS["map"])
    s["reducing"] = backend.get_reducing_state(DESCRIPTORS["reducing"])
    s["aggregating"] = backend.get_aggregating_state(DESCRIPTORS["aggregating"])
    s["window-list"] = backend.get_namespaced_list_state(DESCRIPTORS["window-list"])
    s["window-value"] = backend.get_namespaced_value_state(DESCRIPTORS["window-value"])
    events = backend.timer_queue("_timer_state/event_window-timers")
    processing = backend.timer_queue("_timer_state/processing_user-timers")
    for n, key in enumerate(KEYS):
        backend.set_current_key(key)
        s["value"].update({"n": n, "key": key})
        s["list"].add_all(list(range(n % 5 + 1)))
        s["map"].put_all({f"f{j}": j * n for j in range(n % 4 + 1)})
        s["reducing"].add(n)
        s["reducing"].add(1)
        s["aggregating"].add(n)
        for w in range(n % 3 + 1):
            window = TimeWindow(w * 1000, (w + 1) * 1000)
            backend.current_namespace = window
            s["window-list"].add((key, w))
            s["window-value"].update(w)
            events.add(window.max_timestamp(), key, window)
        processing.add(10_000 + n, key, None)


def state_of(backend: Any) -> dict[str, Any]:
    """Everything a backend holds, read through the state handles, plus its timers."""
    handles = {
        "value": backend.get_value_state(DESCRIPTORS["value"]),
        "list": backend.get_list_state(DESCRIPTORS["list"]),
        "map": backend.get_map_state(DESCRIPTORS["map"]),
        "reducing": backend.get_reducing_state(DESCRIPTORS["reducing"]),
        "aggregating": backend.get_aggregating_state(DESCRIPTORS["aggregating"]),
    }
    window_list = backend.get_namespaced_list_state(DESCRIPTORS["window-list"])
    window_value = backend.get_namespaced_value_state(DESCRIPTORS["window-value"])
    out: dict[str, Any] = {}
    for key in KEYS:
        backend.set_current_key(key)
        out[f"value/{key!r}"] = handles["value"].value()
        out[f"list/{key!r}"] = handles["list"].get()
        out[f"map/{key!r}"] = dict(handles["map"].items())
        out[f"reducing/{key!r}"] = handles["reducing"].get()
        out[f"aggregating/{key!r}"] = handles["aggregating"].get()
        for w in range(3):
            backend.current_namespace = TimeWindow(w * 1000, (w + 1) * 1000)
            out[f"window-list/{key!r}/{w}"] = window_list.get()
            out[f"window-value/{key!r}/{w}"] = window_value.value()
    for name, queue in backend.timer_queues().items():
        out[f"timers/{name}"] = sorted(queue, key=repr)
    return out


def snapshot(backend: Any, storage: FsspecCheckpointStorage, directory: str) -> tuple[list[str], Any]:
    sub = snapshot_keyed_backend(
        storage, directory, backend, operator_id="op", subtask_index=0, parallelism=1
    )
    return key_group_blobs(directory, sub.key_groups), sub


def file_contents(storage: FsspecCheckpointStorage, files: list[tuple[int, str, int, int]]) -> dict[int, Any]:
    return {group: read_key_group(storage, path, offset, size) for group, path, offset, size in files}


def test_heap_to_rocksdb_to_heap(tmp_path: Path) -> None:
    storage = FsspecCheckpointStorage()
    heap = HeapKeyedStateBackend(MAX_PAR, ALL)
    fill(heap)
    expected = state_of(heap)
    assert len(expected["timers/_timer_state/event_window-timers"]) == sum(
        n % 3 + 1 for n in range(len(KEYS))
    )

    heap_files, heap_sub = snapshot(heap, storage, str(tmp_path / "from-heap"))
    rocks = RocksDBKeyedStateBackend(MAX_PAR, ALL, local_dir=str(tmp_path / "db"), cache_entries=5)
    restore_keyed_backend(storage, rocks, heap_files)
    assert state_of(rocks) == expected

    rocks_files, rocks_sub = snapshot(rocks, storage, str(tmp_path / "from-rocks"))
    assert rocks_sub.keyed_state_kinds == heap_sub.keyed_state_kinds
    assert [h.key_group for h in rocks_sub.key_groups] == [h.key_group for h in heap_sub.key_groups]
    assert [h.entries for h in rocks_sub.key_groups] == [h.entries for h in heap_sub.key_groups]
    assert file_contents(storage, rocks_files) == file_contents(storage, heap_files), (
        "same canonical contents"
    )
    rocks.dispose()

    back = HeapKeyedStateBackend(MAX_PAR, ALL)
    restore_heap_backend(storage, back, rocks_files)  # the former name still works
    assert state_of(back) == expected
    assert snapshot_heap_backend is snapshot_keyed_backend


def test_rocksdb_snapshot_restores_split_over_two_heap_subtasks(tmp_path: Path) -> None:
    storage = FsspecCheckpointStorage()
    rocks = RocksDBKeyedStateBackend(MAX_PAR, ALL, local_dir=str(tmp_path / "db"), cache_entries=5)
    fill(rocks)
    expected = state_of(rocks)
    _, sub = snapshot(rocks, storage, str(tmp_path / "snap"))
    rocks.dispose()
    halves = [KeyGroupRange.of_operator(MAX_PAR, 2, i) for i in range(2)]
    merged: dict[str, Any] = {}
    for kgr in halves:
        part = HeapKeyedStateBackend(MAX_PAR, kgr)
        mine = key_group_blobs(str(tmp_path / "snap"), [h for h in sub.key_groups if h.key_group in kgr])
        restore_keyed_backend(storage, part, mine)
        got = state_of(part)
        for name, value in got.items():
            if name.startswith("timers/"):
                merged[name] = sorted([*merged.get(name, []), *value], key=repr)
            elif value not in (None, [], {}):
                assert name not in merged, f"{name} restored twice"
                merged[name] = value
    assert merged == {k: v for k, v in expected.items() if k.startswith("timers/") or v not in (None, [], {})}
