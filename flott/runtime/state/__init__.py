"""Keyed state: key groups (how keys map to subtasks), the backend contract and its backends.

Backends: ``heap`` (dicts; ``state.backend.type: hashmap``) and ``rocksdb`` (an embedded
RocksDB; ``state.backend.type: rocksdb``), picked by ``flott.runtime.operators.state_backend_loader``
(a floor above both, so that this package and its backends only import downwards). State time-to-live
(``StateTtlConfig``) works on both: ``ttl`` (what is stored, expiry, cleanup) and
``heap.ttl_states`` (the state objects).
"""

from flott.runtime.state.backend import KeyedStateBackend, StateKind, TimerQueue
from flott.runtime.state.key_groups import (
    KeyGroupRange,
    assign_key_to_parallel_operator,
    assign_to_key_group,
    compute_default_max_parallelism,
    compute_key_group_range_for_operator_index,
    compute_operator_index_for_key_group,
    stable_key_hash,
)

__all__ = [
    "KeyGroupRange",
    "KeyedStateBackend",
    "StateKind",
    "TimerQueue",
    "assign_key_to_parallel_operator",
    "assign_to_key_group",
    "compute_default_max_parallelism",
    "compute_key_group_range_for_operator_index",
    "compute_operator_index_for_key_group",
    "stable_key_hash",
]
