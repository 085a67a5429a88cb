"""Stream partitioners: how a producer spreads its records over consumer subtasks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flott.errors import InvalidJobGraphError
from flott.runtime.jobgraph import PartitionerDescriptor
from flott.runtime.operators.specs import CustomPartitionerSpec
from flott.runtime.partitioner.custom_partitioner import CustomPartitionerWrapper
from flott.runtime.partitioner.key_group_stream_partitioner import KeyGroupStreamPartitioner
from flott.runtime.partitioner.stream_partitioner import (
    BroadcastPartitioner,
    ForwardPartitioner,
    GlobalPartitioner,
    RebalancePartitioner,
    RescalePartitioner,
    ShufflePartitioner,
    StreamPartitioner,
)


def create_partitioner(
    descriptor: PartitionerDescriptor,
    *,
    subtask_index: int,
    parallelism: int,
    max_parallelism: int,
    key_selector: Callable[[Any], Any] | None = None,
    timestamped: bool = False,
) -> StreamPartitioner:
    """The partitioner an edge's descriptor names, for producer subtask ``subtask_index``.

    ``max_parallelism`` is the *consumer's* max parallelism (its key groups);
    ``key_selector`` is the resolved key function for ``hash`` edges and the loaded
    :class:`CustomPartitionerSpec` for ``custom`` edges; ``timestamped`` says
    the records are ``(value, timestamp)`` pairs (the key is the value's).
    Call :meth:`StreamPartitioner.setup` with the number of channels before use.
    """
    kind = descriptor.kind
    if kind == "forward":
        return ForwardPartitioner(subtask_index)
    if kind == "rebalance":
        return RebalancePartitioner()
    if kind == "rescale":
        return RescalePartitioner(subtask_index, parallelism)
    if kind == "shuffle":
        return ShufflePartitioner()
    if kind == "broadcast":
        return BroadcastPartitioner()
    if kind == "global":
        return GlobalPartitioner()
    if kind == "hash":
        if key_selector is None:
            raise InvalidJobGraphError("hash partitioner needs a key selector")
        return KeyGroupStreamPartitioner(key_selector, max_parallelism, timestamped=timestamped)
    if kind == "custom":
        if not isinstance(key_selector, CustomPartitionerSpec):
            raise InvalidJobGraphError("custom partitioner needs a Partitioner and a key selector")
        return CustomPartitionerWrapper(key_selector, timestamped=timestamped)
    raise InvalidJobGraphError(f"unknown partitioner kind {kind!r}")


__all__ = [
    "BroadcastPartitioner",
    "CustomPartitionerWrapper",
    "ForwardPartitioner",
    "GlobalPartitioner",
    "KeyGroupStreamPartitioner",
    "RebalancePartitioner",
    "RescalePartitioner",
    "ShufflePartitioner",
    "StreamPartitioner",
    "create_partitioner",
]
