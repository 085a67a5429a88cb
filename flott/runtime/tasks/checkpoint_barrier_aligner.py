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

Unaligned checkpoints (``unaligned=True``, Flink's SingleCheckpointBarrierHandler in its
unaligned states): the *first* barrier of a checkpoint starts it at once: ``on_unaligned_started``
snapshots the operators, sends the barrier downstream ahead of the queued output and starts
recording each input channel's in-flight data. Channels are never blocked. Each later barrier of
that checkpoint ends its channel's recording (``on_channel_barrier``); when every open channel
delivered it, ``on_unaligned_done`` closes the checkpoint's channel state. Savepoints stay
aligned whatever the setting (a savepoint holds no in-flight data, so it can be restored with
another parallelism or job version).

States: WAITING (no checkpoint pending), ALIGNING (blocking channels), TRACKING (at least once),
UNALIGNED (snapshot taken, collecting the remaining barriers). A barrier the state does not allow
(the same channel twice for the pending checkpoint, a channel that already ended) raises
:class:`~flott.errors.IllegalBarrierTransitionError`: channels are FIFO and deliver a barrier once.

The class is synchronous and knows only the gates' ``block_channel``/``unblock_all``: it is
driven by the task's input loop and tested without sockets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum

from flott.errors import IllegalBarrierTransitionError
from flott.runtime.io.network.api import CheckpointBarrier, InputGate

CHECKPOINT = "CHECKPOINT"


class HandlerState(Enum):
    WAITING = "waiting for the first barrier"
    ALIGNING = "collecting barriers, aligned"
    TRACKING = "collecting barriers, at least once"
    UNALIGNED = "collecting barriers, unaligned"


class CheckpointBarrierAligner:
    def __init__(
        self,
        gates: Sequence[InputGate],
        on_aligned: Callable[[CheckpointBarrier], None],
        on_cancelled: Callable[[int, str], None],
        blocking: bool = True,
        unaligned: bool = False,
        on_unaligned_started: Callable[[CheckpointBarrier], None] | None = None,
        on_channel_barrier: Callable[[int, int, CheckpointBarrier], None] | None = None,
        on_unaligned_done: Callable[[CheckpointBarrier], None] | None = None,
    ) -> None:
        """``unaligned``: checkpoints (not savepoints) start on their first barrier; the three
        ``on_unaligned_*``/``on_channel_barrier`` callbacks are then required. ``on_aligned`` is
        still what aligned savepoints call."""
        if unaligned and not blocking:
            raise ValueError("unaligned checkpoints need EXACTLY_ONCE (blocking) mode")
        callbacks = (on_unaligned_started, on_channel_barrier, on_unaligned_done)
        if unaligned and any(c is None for c in callbacks):
            raise ValueError("unaligned checkpoints need the on_unaligned_* and on_channel_barrier callbacks")
        self._gates = list(gates)
        self._blocking = blocking
        self._unaligned = unaligned
        self._on_aligned = on_aligned
        self._on_cancelled = on_cancelled
        self._on_unaligned_started = on_unaligned_started
        self._on_channel_barrier = on_channel_barrier
        self._on_unaligned_done = on_unaligned_done
        self._open: list[set[int]] = [set(range(g.num_channels)) for g in self._gates]
        self._ended: set[tuple[int, int]] = set()
        self.pending: CheckpointBarrier | None = None
        self.first_channel: tuple[int, int] | None = None
        """(gate, channel) whose barrier started the pending checkpoint."""
        self.state = HandlerState.WAITING
        self._arrived: set[tuple[int, int]] = set()
        self.last_completed_id = 0

    def open_channels(self) -> list[tuple[int, int]]:
        """(gate, channel) of every channel that has not ended."""
        return [(g, c) for g, channels in enumerate(self._open) for c in sorted(channels)]

    def _num_open(self) -> int:
        return sum(len(channels) for channels in self._open)

    def _state_for(self, barrier: CheckpointBarrier) -> HandlerState:
        if barrier.checkpoint_type != CHECKPOINT:
            return HandlerState.ALIGNING  # savepoints always align
        if self._unaligned:
            return HandlerState.UNALIGNED
        return HandlerState.ALIGNING if self._blocking else HandlerState.TRACKING

    def on_barrier(self, gate_index: int, channel: int, barrier: CheckpointBarrier) -> None:
        cid = barrier.checkpoint_id
        if (gate_index, channel) in self._ended:
            raise IllegalBarrierTransitionError(
                f"barrier {cid} on gate {gate_index} channel {channel}, which already ended"
            )
        if cid <= self.last_completed_id:
            return  # a late barrier of a checkpoint already taken or given up
        pending = self.pending
        if pending is not None and cid < pending.checkpoint_id:
            return
        if pending is not None and cid > pending.checkpoint_id:
            self._cancel(f"barrier {cid} overtook it during alignment")
        if self.pending is None:
            self.pending = barrier
            self.first_channel = (gate_index, channel)
            self.state = self._state_for(barrier)
            if self.state is HandlerState.UNALIGNED:
                assert self._on_unaligned_started is not None
                self._on_unaligned_started(barrier)
        elif (gate_index, channel) in self._arrived:
            raise IllegalBarrierTransitionError(
                f"barrier {cid} arrived twice on gate {gate_index} channel {channel} ({self.state.value})"
            )
        self._arrived.add((gate_index, channel))
        if self.state is HandlerState.UNALIGNED:
            assert self._on_channel_barrier is not None
            self._on_channel_barrier(gate_index, channel, barrier)
        elif self.state is HandlerState.ALIGNING:
            self._gates[gate_index].block_channel(channel)
        self._maybe_complete()

    def on_end_of_partition(self, gate_index: int, channel: int) -> None:
        self._open[gate_index].discard(channel)
        self._ended.add((gate_index, channel))
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
        self.state = HandlerState.WAITING
        self._arrived.clear()
        for gate in self._gates:
            gate.unblock_all()

    def _maybe_complete(self) -> None:
        barrier = self.pending
        if barrier is None or len(self._arrived) < self._num_open():
            return
        self.last_completed_id = barrier.checkpoint_id
        if self.state is HandlerState.UNALIGNED:
            self._reset()
            assert self._on_unaligned_done is not None
            self._on_unaligned_done(barrier)
            return
        # Snapshot while the channels are still blocked, then let data flow again.
        try:
            self._on_aligned(barrier)
        finally:
            self._reset()
