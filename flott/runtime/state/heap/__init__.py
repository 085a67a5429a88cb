"""Keyed state on the Python heap: dicts per state name, scoped to the current key."""

from __future__ import annotations

from flott.runtime.state.heap.heap_keyed_state_backend import HeapKeyedStateBackend
from flott.runtime.state.heap.heap_states import (
    HeapAggregatingState,
    HeapListState,
    HeapMapState,
    HeapReducingState,
    HeapValueState,
)

__all__ = [
    "HeapAggregatingState",
    "HeapKeyedStateBackend",
    "HeapListState",
    "HeapMapState",
    "HeapReducingState",
    "HeapValueState",
]
