"""Aligned checkpoint barriers across a task's input channels (Flink's SingleCheckpointBarrierHandler).

A task with several input channels takes its snapshot for checkpoint *n* once barrier *n* has
arrived on every channel still open. A channel that delivered the barrier is blocked at its
input gate meanwhile: its data stays queued (upstream, since no credit goes back), so nothing
after the barrier is processed before the snapshot, and nothing before it after. Then the
barrier goes on downstream and the channels are unblocked.

A newer barrier arriving while an older alignment is incomplete means the older checkpoint was
given up upstream (subsumed or aborted): the older one is cancelled and the newer one starts.
A channel that ends (EndOfPartition) stops counting, which can complete an alignment.

``CheckpointingMode.AT_LEAST_ONCE`` (``blocking=False``, Flink's CheckpointBarrierTracker):
channels are never blocked; the snapshot is taken when the barrier has arrived on every open
channel, so records after the barrier on a fast channel may be in the snapshot's state too and
are replayed after a restore (at least once, no alignment delay). Savepoints still align: a
savepoint is a consistent state to restore or stop at, whatever the checkpointing mode.

The class is synchronous and knows only the gates' ``block_channel``/``unblock_all``: it is
driven by the task's input loop and tested without sockets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from flott.runtime.io.network.api import CheckpointBarrier, InputGate


class CheckpointBarrierAligner:
    def __init__(
        self,
        gates: Sequence[InputGate],
        on_aligned: Callable[[CheckpointBarrier], None],
        on_cancelled: Callable[[int, str], None],
        blocking: bool = True,
    ) -> None:
        self._gates = list(gates)
        self._blocking = blocking
        self._on_aligned = on_aligned
        self._on_cancelled = on_cancelled
        self._open: list[set[int]] = [set(range(g.num_channels)) for g in self._gates]
        self.pending: CheckpointBarrier | None = None
        self._arrived: set[tuple[int, int]] = set()
        self.last_completed_id = 0

    def _num_open(self) -> int:
        return sum(len(channels) for channels in self._open)

    def on_barrier(self, gate_index: int, channel: int, barrier: CheckpointBarrier) -> None:
        cid = barrier.checkpoint_id
        if cid <= self.last_completed_id:
            return  # a late barrier of a checkpoint already taken or given up
        pending = self.pending
        if pending is not None and cid < pending.checkpoint_id:
            return
        if pending is not None and cid > pending.checkpoint_id:
            self._cancel(f"barrier {cid} overtook it during alignment")
        if self.pending is None:
            self.pending = barrier
        self._arrived.add((gate_index, channel))
        if self._blocking or barrier.checkpoint_type != "CHECKPOINT":
            self._gates[gate_index].block_channel(channel)
        self._maybe_complete()

    def on_end_of_partition(self, gate_index: int, channel: int) -> None:
        self._open[gate_index].discard(channel)
        self._arrived.discard((gate_index, channel))
        if self.pending is not None:
            self._maybe_complete()

    def abort(self, checkpoint_id: int, reason: str) -> None:
        """The JobMaster gave the checkpoint up: stop aligning on it."""
        if self.pending is not None and self.pending.checkpoint_id == checkpoint_id:
            self._cancel(reason)
        self.last_completed_id = max(self.last_completed_id, checkpoint_id)

    def _cancel(self, reason: str) -> None:
        assert self.pending is not None
        cid = self.pending.checkpoint_id
        self._reset()
        self.last_completed_id = max(self.last_completed_id, cid)
        self._on_cancelled(cid, reason)

    def _reset(self) -> None:
        self.pending = None
        self._arrived.clear()
        for gate in self._gates:
            gate.unblock_all()

    def _maybe_complete(self) -> None:
        barrier = self.pending
        if barrier is None or len(self._arrived) < self._num_open():
            return
        self.last_completed_id = barrier.checkpoint_id
        # Snapshot while the channels are still blocked, then let data flow again.
        try:
            self._on_aligned(barrier)
        finally:
            self._reset()
