"""Keyed state semantics on every backend (heap and RocksDB), and the RocksDB backend's own rules:
a write-back cache that never loses in-place changes, keys addressed like dict keys, a working
directory that goes away."""

from __future__ import annotations

import gc
import os
import random
from typing import Any

import pytest

from flott.datastream.functions import AggregateFunction
from flott.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from flott.runtime.state.key_groups import KeyGroupRange, assign_to_key_group
from flott.runtime.state.rocksdb import RocksDBKeyedStateBackend
from tests.state.conftest import MakeBackend


class Avg(AggregateFunction):
    def create_accumulator(self) -> Any:
        return [0, 0]

    def add(self, value: Any, acc: Any) -> Any:
        return [acc[0] + value, acc[1] + 1]

    def get_result(self, acc: Any) -> Any:
        return acc[0] / acc[1]

    def merge(self, a: Any, b: Any) -> Any:
        return [a[0] + b[0], a[1] + b[1]]


def all_state(backend: Any) -> dict[str, dict[Any, Any]]:
    """Every state's ``{key: value}``, read through the snapshot path."""
    out: dict[str, dict[Any, Any]] = {}
    for _, states in backend.iter_key_group_entries():
        for name, entries in states.items():
            out.setdefault(name, {}).update(entries)
    return out


def test_value_list_map_reducing_aggregating(make_backend: MakeBackend) -> None:
    b = make_backend()
    v = b.get_value_state(ValueStateDescriptor("v", None))
    lst = b.get_list_state(ListStateDescriptor("l", None))
    m = b.get_map_state(MapStateDescriptor("m", None, None))
    r = b.get_reducing_state(ReducingStateDescriptor("r", lambda a, c: a + c, None))
    a = b.get_aggregating_state(AggregatingStateDescriptor("a", Avg(), None))
    for i in range(40):  # more keys than the RocksDB object cache holds
        b.set_current_key(f"k{i}")
        assert v.value() is None
        v.update(i)
        lst.add(i)
        lst.add_all([i + 1, i + 2])
        m.put("x", i)
        m.put("y", -i)
        r.add(i)
        r.add(1)
        a.add(i)
        a.add(i + 2)
    for i in range(40):
        b.set_current_key(f"k{i}")
        assert v.value() == i
        assert lst.get() == [i, i + 1, i + 2]
        assert dict(m.items()) == {"x": i, "y": -i}
        assert r.get() == i + 1
        assert a.get() == i + 1
    b.set_current_key("k3")
    v.update(None)
    lst.update([])
    m.remove("x")
    m.remove("y")
    assert (v.value(), lst.get(), m.is_empty()) == (None, [], True)
    assert b.num_keys("v") == 39 and b.num_keys("l") == 39 and b.num_keys("m") == 39
    assert "k3" not in set(b.keys("v"))
    with pytest.raises(ValueError, match="already registered"):
        b.get_list_state(ListStateDescriptor("v", None))


def test_namespaced_states_and_merging(make_backend: MakeBackend) -> None:
    b = make_backend()
    lst = b.get_namespaced_list_state(ListStateDescriptor("wl", None))
    red = b.get_namespaced_reducing_state(ReducingStateDescriptor("wr", lambda x, y: x + y, None))
    agg = b.get_namespaced_aggregating_state(AggregatingStateDescriptor("wa", Avg(), None))
    val = b.get_namespaced_value_state(ValueStateDescriptor("wv", None))
    mp = b.get_namespaced_map_state(MapStateDescriptor("wm", None, None))
    for key in range(10):
        b.set_current_key(key)
        for ns in ("w1", "w2", "w3"):
            b.current_namespace = ns
            lst.add(f"{key}{ns}")
            red.add(key)
            agg.add(key)
            val.update((key, ns))
            mp.put(ns, key)
    for key in range(10):
        b.set_current_key(key)
        lst.merge_namespaces("w3", ["w1", "w2"])
        red.merge_namespaces("w3", ["w1", "w2"])
        agg.merge_namespaces("w3", ["w1", "w2"])
    for key in range(10):
        b.set_current_key(key)
        b.current_namespace = "w3"
        assert sorted(lst.get()) == sorted(f"{key}{ns}" for ns in ("w1", "w2", "w3"))
        assert red.get() == 3 * key
        assert agg.get() == key
        assert val.value() == (key, "w3")
        assert mp.get("w3") == key
        b.current_namespace = "w1"
        assert lst.get() == [] and red.get() is None and agg.get() is None
        assert val.value() == (key, "w1")
    assert b.is_namespaced("wl") and not b.is_namespaced("nope")
    with pytest.raises(ValueError, match="per window"):
        b.get_list_state(ListStateDescriptor("wl", None))
    state = all_state(b)
    assert state["wv"][4] == {"w1": (4, "w1"), "w2": (4, "w2"), "w3": (4, "w3")}


def test_operator_tables_behave_like_dicts(make_backend: MakeBackend) -> None:
    """What operators do with ``state_table`` / ``namespaced_table``: in place, through references."""
    b = make_backend()
    table = b.state_table("reduce")
    windows = b.namespaced_table("window-contents", "list")
    for i in range(30):
        key = i % 12
        if key in table:
            table[key] = table[key] + 1
        else:
            table[key] = 1
        inner = windows.get(key)
        if inner is None:
            windows[key] = {"w": [i]}
        else:
            inner["w"].append(i)  # changed in place, never assigned back
    assert dict(all_state(b)["reduce"]) == {k: (3 if k < 6 else 2) for k in range(12)}
    assert all_state(b)["window-contents"][0] == {"w": [0, 12, 24]}
    inner = windows[5]
    inner.pop("w")
    del windows[5]
    assert 5 not in windows and windows.get(5) is None
    assert table.pop(5) == 3 and table.pop(5, "gone") == "gone"
    with pytest.raises(KeyError):
        del table[5]
    assert sorted(b.keys("reduce")) == [k for k in range(12) if k != 5]


def test_equal_keys_are_one_key(make_backend: MakeBackend) -> None:
    """``1``, ``1.0`` and ``True`` are one dict key on the heap, so they are one key in the store."""
    b = make_backend()
    v = b.get_value_state(ValueStateDescriptor("v", None))
    b.set_current_key(1)
    v.update("one")
    for other in range(100):  # push key 1 out of the RocksDB cache
        b.set_current_key(("filler", other))
        v.update(other)
    for alias in (1, 1.0, True):
        b.set_current_key(alias)
        assert v.value() == "one"
    b.set_current_key(("filler", 3))
    assert v.value() == 3


def test_iter_key_group_entries_is_ascending_and_matches_the_split(make_backend: MakeBackend) -> None:
    b = make_backend(max_parallelism=16, key_group_range=KeyGroupRange(0, 15))
    v = b.get_value_state(ValueStateDescriptor("v", None))
    lst = b.get_list_state(ListStateDescriptor("l", None))
    for i in range(200):
        b.set_current_key(i)
        v.update(i * 2)
        if i % 3 == 0:
            lst.add(i)
    groups = list(b.iter_key_group_entries())
    assert [g for g, _ in groups] == sorted({assign_to_key_group(i, 16) for i in range(200)})
    for group, states in groups:
        assert states["v"] == b.entries_by_key_group("v")[group]
        assert all(assign_to_key_group(k, 16) == group for k in states["v"])
        assert states.get("l", {}) == b.entries_by_key_group("l").get(group, {})


def test_restored_state_may_be_claimed_per_window(make_backend: MakeBackend) -> None:
    """A snapshot does not say whether a state is namespaced: the first registration decides."""
    b = make_backend()
    b.restore_entries("win", "list", {"k": {"w1": [1, 2]}})
    b.restore_entries("plain", "value", {"k": 7})
    state = b.get_namespaced_list_state(ListStateDescriptor("win", None))
    plain = b.get_value_state(ValueStateDescriptor("plain", None))
    b.set_current_key("k")
    b.current_namespace = "w1"
    assert state.get() == [1, 2]
    assert plain.value() == 7
    with pytest.raises(ValueError, match="per window"):
        b.get_list_state(ListStateDescriptor("win", None))


def test_random_operations_give_the_same_state_on_both_backends(tmp_path: Any) -> None:
    """A differential test: the same random program on the heap and on RocksDB (tiny cache)."""
    from flott.runtime.state.heap import HeapKeyedStateBackend

    heap = HeapKeyedStateBackend(32, KeyGroupRange(0, 31))
    rocks = RocksDBKeyedStateBackend(32, KeyGroupRange(0, 31), local_dir=str(tmp_path), cache_entries=3)
    rng = random.Random(7)
    keys: list[Any] = [*range(15), "a", "b", ("t", 1), 2.5, None]
    program = [
        (rng.choice(keys), rng.choice("vlmrn"), rng.random(), rng.randrange(1000), rng.choice("xyz"))
        for _ in range(3000)
    ]
    for backend in (heap, rocks):
        v = backend.get_value_state(ValueStateDescriptor("v", None))
        lst = backend.get_list_state(ListStateDescriptor("l", None))
        m = backend.get_map_state(MapStateDescriptor("m", None, None))
        r = backend.get_reducing_state(ReducingStateDescriptor("r", lambda a, c: a + c, None))
        n = backend.get_namespaced_list_state(ListStateDescriptor("n", None))
        for key, which, p, number, ns in program:
            backend.set_current_key(key)
            backend.current_namespace = ns
            if which == "v":
                v.update(None if p < 0.2 else number)
            elif which == "l":
                if p < 0.1:
                    lst.clear()
                else:
                    lst.add(number)
            elif which == "m":
                if p < 0.3:
                    m.remove(ns)
                else:
                    m.put(ns, number)
            elif which == "r":
                r.clear() if p < 0.1 else r.add(number)
            elif p < 0.2:
                n.merge_namespaces(ns, [x for x in "xyz" if x != ns])
            else:
                n.add(number)
    assert all_state(rocks) == all_state(heap)
    for name in ("v", "l", "m", "r", "n"):
        assert rocks.entries_by_key_group(name) == heap.entries_by_key_group(name)
        assert rocks.num_keys(name) == heap.num_keys(name)
    rocks.dispose()


def test_rocksdb_working_directory_is_deleted_on_dispose_and_on_garbage_collection(tmp_path: Any) -> None:
    b = RocksDBKeyedStateBackend(
        128, KeyGroupRange(0, 127), local_dir=str(tmp_path), operator_id="my op/1", subtask_index=3
    )
    directory = b.working_dir
    assert os.path.isdir(directory) and os.path.dirname(directory) == str(tmp_path)
    assert os.path.basename(directory).startswith(f"flott-rocksdb-{os.getpid()}-my_op_1-3-")
    b.get_value_state(ValueStateDescriptor("v", None))
    b.dispose()
    b.dispose()
    assert not os.path.exists(directory)
    dropped = RocksDBKeyedStateBackend(128, KeyGroupRange(0, 127), local_dir=str(tmp_path))
    directory = dropped.working_dir
    del dropped
    gc.collect()
    assert not os.path.exists(directory)


def test_rocksdb_state_goes_to_the_store_not_only_the_cache(tmp_path: Any) -> None:
    b = RocksDBKeyedStateBackend(128, KeyGroupRange(0, 127), local_dir=str(tmp_path), cache_entries=10)
    v = b.get_value_state(ValueStateDescriptor("v", None))
    for i in range(1000):
        b.set_current_key(i)
        v.update("x" * 100)
    table = b._store_tables()["v"]
    assert table.cached_entries <= 20
    b.flush()
    stored = sum(1 for _ in b.store.scan(b"", None))
    assert stored == 1000
    b.dispose()


def test_rocksdb_names_the_state_holding_an_unpicklable_value(tmp_path: Any) -> None:
    import threading

    b = RocksDBKeyedStateBackend(128, KeyGroupRange(0, 127), local_dir=str(tmp_path), cache_entries=2)
    v = b.get_value_state(ValueStateDescriptor("locks", None))
    b.set_current_key("a")
    v.update(threading.Lock())
    with pytest.raises(TypeError, match="state 'locks' holds a key or value that cannot be pickled"):
        b.flush()
    b.dispose()


_KILLED_OWNER = """
import os, signal, sys
from flott.runtime.state.key_groups import KeyGroupRange
from flott.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend
b = RocksDBKeyedStateBackend(128, KeyGroupRange(0, 127), local_dir=sys.argv[1], operator_id="op")
print(b.working_dir, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_rocksdb_directories_of_killed_processes_are_swept_by_the_next_backend(tmp_path: Any) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", _KILLED_OWNER, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == -9, proc.stderr
    orphan = proc.stdout.strip()
    assert os.path.isdir(orphan)  # SIGKILL: neither dispose() nor the finalizer ran
    unrelated = tmp_path / "someone-elses-dir"
    unrelated.mkdir()
    b = RocksDBKeyedStateBackend(128, KeyGroupRange(0, 127), local_dir=str(tmp_path))
    try:
        assert not os.path.exists(orphan)
        assert os.path.isdir(b.working_dir) and unrelated.is_dir()
    finally:
        b.dispose()
