"""Stream partitioners: which consumer subtask gets which record (Flink's StreamPartitioner).

A partitioner works on a whole batch: :meth:`StreamPartitioner.distribute`
appends the records of one batch to the per-channel lists the RecordWriter
keeps. Round-robin style partitioners move slices (``records[j::n]``), so
their cost per record is a C-level copy, not a Python call.

Channels are the subpartitions of the producer's result partition, one per
consumer subtask. A ``forward`` edge may be given a partition with a single
subpartition (point-wise) or one per consumer; both work.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from typing import Any


class StreamPartitioner(ABC):
    """Distributes batches over ``num_channels`` output channels."""

    is_broadcast = False

    def __init__(self) -> None:
        self.num_channels = 0
        self.single_channel: int | None = None
        """Set when every record goes to one channel: the RecordWriter then skips distribution."""

    def setup(self, num_channels: int) -> None:
        if num_channels < 1:
            raise ValueError(f"{type(self).__name__} needs at least one channel, got {num_channels}")
        self.num_channels = num_channels
        if num_channels == 1:
            self.single_channel = 0

    @abstractmethod
    def distribute(self, records: list[Any], buffers: list[list[Any]]) -> None:
        """Append each record of ``records`` to the buffer(s) of its channel(s)."""

    def close(self) -> None:  # noqa: B027 - optional hook, most partitioners run no user code
        """Release user code the partitioner runs (only ``partition_custom``'s has any)."""

    def __repr__(self) -> str:
        return type(self).__name__.removesuffix("Partitioner").upper()


class ForwardPartitioner(StreamPartitioner):
    """Subtask ``i`` feeds consumer subtask ``i`` (equal parallelism, no shuffle)."""

    def __init__(self, subtask_index: int) -> None:
        super().__init__()
        self._subtask_index = subtask_index

    def setup(self, num_channels: int) -> None:
        super().setup(num_channels)
        if num_channels > 1:
            if self._subtask_index >= num_channels:
                raise ValueError(
                    f"forward partitioner of subtask {self._subtask_index} has only {num_channels} channels"
                )
            self.single_channel = self._subtask_index

    def distribute(self, records: list[Any], buffers: list[list[Any]]) -> None:
        buffers[self.single_channel or 0].extend(records)


class GlobalPartitioner(StreamPartitioner):
    """Everything to consumer subtask 0."""

    def setup(self, num_channels: int) -> None:
        super().setup(num_channels)
        self.single_channel = 0

    def distribute(self, records: list[Any], buffers: list[list[Any]]) -> None:
        buffers[0].extend(records)


class BroadcastPartitioner(StreamPartitioner):
    """Every record to every consumer subtask."""

    is_broadcast = True

    def distribute(self, records: list[Any], buffers: list[list[Any]]) -> None:
        for buffer in buffers:
            buffer.extend(records)


class RebalancePartitioner(StreamPartitioner):
    """Round-robin over all channels, starting at a random channel so producers do not gang up."""

    def __init__(self, rng: random.Random | None = None) -> None:
        super().__init__()
        self._rng = rng or random.Random()
        self._targets: list[int] = []
        self._next = 0

    def setup(self, num_channels: int) -> None:
        super().setup(num_channels)
        self._targets = list(range(num_channels))
        self._next = self._rng.randrange(num_channels)

    def distribute(self, records: list[Any], buffers: list[list[Any]]) -> None:
        targets = self._targets
        n = len(targets)
        start = self._next
        m = len(records)
        if n == 1:
            buffers[targets[0]].extend(records)
            return
        # Record j of the batch goes to target (start + j) % n: one slice per target.
        for j in range(min(n, m)):
            buffers[targets[(start + j) % n]].extend(records[j::n])
        self._next = (start + m) % n


class RescalePartitioner(RebalancePartitioner):
    """Round-robin over the consumers "local" to this producer (Flink's rescale).

    With p producers and n consumers, producer ``i`` feeds consumers
    ``[i*n//p, (i+1)*n//p)`` when n >= p, or consumer ``i*n//p`` when n < p, so
    scaling up or down only connects neighbouring subtasks.
    """

    def __init__(self, subtask_index: int, parallelism: int, rng: random.Random | None = None) -> None:
        super().__init__(rng)
        self._subtask_index = subtask_index
        self._parallelism = parallelism

    def setup(self, num_channels: int) -> None:
        super().setup(num_channels)
        i, p, n = self._subtask_index, self._parallelism, num_channels
        if n >= p:
            self._targets = list(range(i * n // p, (i + 1) * n // p))
        else:
            self._targets = [i * n // p]
        self._next = self._rng.randrange(len(self._targets))
        if len(self._targets) == 1:
            self.single_channel = self._targets[0]


class ShufflePartitioner(StreamPartitioner):
    """A uniformly random channel per record."""

    def __init__(self, rng: random.Random | None = None) -> None:
        super().__init__()
        self._rng = rng or random.Random()

    def distribute(self, records: list[Any], buffers: list[list[Any]]) -> None:
        channels = self._rng.choices(range(self.num_channels), k=len(records))
        for channel, record in zip(channels, records, strict=True):
            buffers[channel].append(record)
