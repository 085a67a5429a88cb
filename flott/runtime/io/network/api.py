"""The contract between tasks and the data-exchange layer (Flink's ResultPartitionWriter / InputGate).

Tasks run on their own threads; the exchange layer does its socket I/O on the
TaskExecutor's asyncio loop. These blocking interfaces are what a task thread
sees. Records travel in batches (Python lists); the layer serialises a batch
into one buffer and the consumer side deserialises it on the consumer task's
thread. Memory is bounded: a subpartition holds at most a few buffers, and a
producer that finds its subpartition full blocks in :meth:`emit` until the
consumer gave credit (that is backpressure).
"""

from __future__ import annotations

from typing import Protocol

import msgspec


class EndOfPartition(msgspec.Struct, frozen=True, tag="eop"):
    """The producer finished: no more buffers on this channel."""


class ChannelEvent(msgspec.Struct, frozen=True):
    """Base for in-band events."""


class CheckpointBarrier:
    """Checkpoint ``checkpoint_id``: records before it on a channel belong to it, records after do not.

    Sources inject it; a task with several input channels aligns on it (stops reading a channel
    that delivered it until every channel did), snapshots its state and forwards it.
    """

    __slots__ = ("checkpoint_id", "checkpoint_type", "drain", "location", "timestamp")

    def __init__(
        self, checkpoint_id: int, timestamp: int, checkpoint_type: str, location: str, drain: bool = False
    ) -> None:
        self.checkpoint_id = checkpoint_id
        self.timestamp = timestamp
        self.checkpoint_type = checkpoint_type
        self.location = location
        self.drain = drain

    def __reduce__(self) -> tuple[type[CheckpointBarrier], tuple[int, int, str, str, bool]]:
        return (
            CheckpointBarrier,
            (self.checkpoint_id, self.timestamp, self.checkpoint_type, self.location, self.drain),
        )

    def __repr__(self) -> str:
        return f"CheckpointBarrier({self.checkpoint_id}, {self.checkpoint_type})"


class ResultPartitionWriter(Protocol):
    """Producer side of one intermediate data set: one subpartition per consumer subtask."""

    @property
    def num_subpartitions(self) -> int: ...

    def emit(self, subpartition: int, records: list) -> None:
        """Queue a batch of records for one consumer subtask. Blocks under backpressure.

        Raises TaskCancelledError if the partition was released (task cancelled)
        and DataExchangeError if the consumer's connection broke.
        """

    def broadcast_event(self, event: object) -> None:
        """Send an in-band event to every subpartition, after all records emitted before it."""

    def broadcast_priority_event(self, event: object) -> list[list[object]]:
        """Put ``event`` ahead of everything queued on every subpartition, without waiting for
        space or credit (an unaligned checkpoint's barrier); per subpartition, what it overtook."""

    def finish(self) -> None:
        """Send EndOfPartition to every subpartition; the consumers see their input end."""

    def release(self, cause: str | None = None) -> None:
        """Drop all buffered data and wake any blocked emit (cancel / failure).

        ``cause`` is the producer's own failure: its consumers fail naming it (Flink's
        ProducerFailedException), so whichever report reaches the JobMaster first, the job's
        failure says why."""


class InputGate(Protocol):
    """Consumer side: all channels feeding one input of a task (union of its input edges)."""

    @property
    def num_channels(self) -> int: ...

    def poll(self, timeout: float | None) -> tuple[int, list | object] | None:
        """Next (channel index, records list or event); None if nothing came within ``timeout`` s.

        Blocks at most ``timeout`` seconds (None: until something arrives).
        Raises DataExchangeError if a producer's connection broke, TaskCancelledError
        if the gate was closed (task cancelled).
        """

    def overtaken(self, channel: int) -> int:
        """Items the priority event just polled from ``channel`` overtook in the consumer's own
        queue (they precede it: an unaligned checkpoint records them as input channel state)."""

    def start_recording(self, channel: int, after_barrier: bool) -> bool:
        """Unaligned checkpoint: have ``channel`` record its in-flight data before its barrier as
        it arrives (``after_barrier``: its barrier was just polled); False if it cannot (a local
        channel), and the task records what it polls from it instead."""

    def take_recording(self, channel: int) -> list[bytes]:
        """What ``channel`` recorded (payloads), once its barrier or end was polled."""

    def block_channel(self, channel: int) -> None:
        """Stop delivering from ``channel`` (checkpoint alignment); its data stays queued upstream."""

    def unblock_all(self) -> None:
        """Deliver from every channel again, in arrival order."""

    def close(self) -> None:
        """Release the gate and wake a blocked poll with TaskCancelledError."""
