"""State interfaces and descriptors (PyFlink's ``pyflink.datastream.state``).

They live on the ground floor (``flott.api.common.state``, Flink's ``api.common.state``), where the
runtime's state backends implement them; this module hands them out under PyFlink's import path.
"""

from __future__ import annotations

from flott.api.common.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    AppendingState,
    BroadcastState,
    KeyedStateStore,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    MergingState,
    OperatorStateStore,
    ReadOnlyBroadcastState,
    ReducingState,
    ReducingStateDescriptor,
    State,
    StateDescriptor,
    StateTtlConfig,
    ValueState,
    ValueStateDescriptor,
)

__all__ = [
    "AggregatingState",
    "AggregatingStateDescriptor",
    "AppendingState",
    "BroadcastState",
    "KeyedStateStore",
    "ListState",
    "ListStateDescriptor",
    "MapState",
    "MapStateDescriptor",
    "MergingState",
    "OperatorStateStore",
    "ReadOnlyBroadcastState",
    "ReducingState",
    "ReducingStateDescriptor",
    "State",
    "StateDescriptor",
    "StateTtlConfig",
    "ValueState",
    "ValueStateDescriptor",
]
