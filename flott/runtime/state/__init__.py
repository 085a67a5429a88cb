"""Keyed state: key groups (how keys map to subtasks) and the heap state backend."""

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
    "assign_key_to_parallel_operator",
    "assign_to_key_group",
    "compute_default_max_parallelism",
    "compute_key_group_range_for_operator_index",
    "compute_operator_index_for_key_group",
    "stable_key_hash",
]
