"""Keyed state on the Python heap: dicts per state name, scoped to the current key."""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "HeapKeyedStateBackend": "heap_keyed_state_backend",
    "HeapAggregatingState": "heap_states",
    "HeapListState": "heap_states",
    "HeapMapState": "heap_states",
    "HeapReducingState": "heap_states",
    "HeapValueState": "heap_states",
}


def __getattr__(name: str) -> Any:
    # Import cycle: the state classes subclass flott.datastream.state's, importing that runs
    # flott.datastream/__init__, which imports the operators, which import this package. When this
    # package is imported first, the operators' `from flott.runtime.state.heap import ...` lands
    # here while the line below is still running, and is served by loading the submodule.
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


import flott.datastream  # noqa: E402, F401  (see __getattr__)
from flott.runtime.state.heap.heap_keyed_state_backend import HeapKeyedStateBackend  # noqa: E402
from flott.runtime.state.heap.heap_states import (  # noqa: E402
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
