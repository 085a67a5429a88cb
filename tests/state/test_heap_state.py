"""Heap keyed state: scoping to the current key, PyFlink's state semantics, per-key-group split."""

from __future__ import annotations

from typing import Any

import pytest

from flott.datastream.functions import AggregateFunction
from flott.datastream.state import (
    AggregatingStateDescriptor,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from flott.runtime.state.heap import HeapKeyedStateBackend
from flott.runtime.state.key_groups import KeyGroupRange, assign_to_key_group


@pytest.fixture
def backend() -> HeapKeyedStateBackend:
    return HeapKeyedStateBackend(128, KeyGroupRange(0, 127))


def test_value_state_is_per_key_and_none_until_set(backend: HeapKeyedStateBackend) -> None:
    state = backend.get_value_state(ValueStateDescriptor("v", None))
    backend.set_current_key("a")
    assert state.value() is None
    state.update(1)
    backend.set_current_key("b")
    assert state.value() is None
    state.update(2)
    backend.set_current_key("a")
    assert state.value() == 1
    state.update(None)  # update(None) clears, as in Flink
    assert state.value() is None
    assert backend.num_keys("v") == 1
    assert backend.get_value_state(ValueStateDescriptor("v", None)) is state


def test_list_state(backend: HeapKeyedStateBackend) -> None:
    state = backend.get_list_state(ListStateDescriptor("l", None))
    assert isinstance(state, ListState)
    backend.set_current_key(1)
    assert state.get() == []
    state.add(1)
    state.add_all([2, 3])
    got = state.get()
    got.append(99)  # callers get a copy
    assert list(state) == [1, 2, 3]
    state.update([7])
    assert state.get() == [7]
    state.update([])
    assert backend.num_keys("l") == 0
    with pytest.raises(ValueError):
        state.add(None)


def test_map_state(backend: HeapKeyedStateBackend) -> None:
    state = backend.get_map_state(MapStateDescriptor("m", None, None))
    assert isinstance(state, MapState)
    backend.set_current_key("k")
    assert state.is_empty() and state.get("x") is None
    state.put("x", 1)
    state["y"] = 2
    state.put_all({"z": 3})
    assert state.contains("x") and "y" in state and state["z"] == 3
    assert sorted(state.keys()) == ["x", "y", "z"] and sorted(state.values()) == [1, 2, 3]
    for key, _ in state.items():  # iteration is over a snapshot: removing inside is fine
        state.remove(key)
    assert state.is_empty() and backend.num_keys("m") == 0


def test_reducing_and_aggregating_state(backend: HeapKeyedStateBackend) -> None:
    class Mean(AggregateFunction):
        def create_accumulator(self) -> Any:
            return [0, 0]

        def add(self, value: Any, accumulator: Any) -> Any:
            return [accumulator[0] + value, accumulator[1] + 1]

        def get_result(self, accumulator: Any) -> Any:
            return accumulator[0] / accumulator[1]

    total = backend.get_reducing_state(ReducingStateDescriptor("r", lambda a, b: a + b, None))
    mean = backend.get_aggregating_state(AggregatingStateDescriptor("a", Mean(), None))
    backend.set_current_key("k")
    assert total.get() is None and mean.get() is None
    for v in (1, 2, 6):
        total.add(v)
        mean.add(v)
    assert total.get() == 9 and mean.get() == 3.0
    total.clear()
    assert total.get() is None


def test_same_name_with_another_kind_is_rejected(backend: HeapKeyedStateBackend) -> None:
    backend.get_value_state(ValueStateDescriptor("s", None))
    with pytest.raises(ValueError, match="already registered"):
        backend.get_list_state(ListStateDescriptor("s", None))


def test_entries_split_by_key_group(backend: HeapKeyedStateBackend) -> None:
    state = backend.get_value_state(ValueStateDescriptor("v", None))
    for i in range(300):
        backend.set_current_key(f"k{i}")
        state.update(i)
    split = backend.entries_by_key_group("v")
    assert sum(len(entries) for entries in split.values()) == 300
    for key_group, entries in split.items():
        assert all(assign_to_key_group(k, 128) == key_group for k in entries)
    restored = HeapKeyedStateBackend(128, KeyGroupRange(0, 127))
    for entries in split.values():
        restored.restore_entries("v", "value", entries)
    again = restored.get_value_state(ValueStateDescriptor("v", None))
    restored.set_current_key("k42")
    assert again.value() == 42
