"""An unaligned checkpoint's input channel state, recorded on the task's thread (Flink's
ChannelStatePersister per input channel, fed to the ChannelStateWriter).

The operators' snapshot is taken on the checkpoint's *first* barrier, so whatever a channel
delivers before its own barrier is not in that snapshot: it is recorded here (and processed as
usual) and replayed into the operators on restore, before any new input. Per channel that is

* every item the task polls from it after :meth:`start` and before the channel's barrier;
* then, when the barrier is polled, the items the barrier overtook in the consumer's own queue
  (``overtaken``: received but not yet polled when it arrived, see input_gate.py); the channel's
  recording ends after them.

A channel that ends (EndOfPartition) ends its recording too. Only record batches are kept
(serialised at once: the task goes on with the same list objects); events in between are
counted but not kept (watermarks are regenerated after a restore).

Recording the same channel past its end raises
:class:`~flott.errors.IllegalBarrierTransitionError`. Synchronous, no I/O: tested without sockets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from flott.errors import IllegalBarrierTransitionError

Channel = tuple[int, int]
"""(gate index, channel index)."""


class InputChannelStateRecorder:
    """Records one checkpoint's in-flight input at a time (unaligned checkpoints allow one)."""

    def __init__(self, serialize: Callable[[list], bytes]) -> None:
        self._serialize = serialize
        self.checkpoint_id: int | None = None
        self._recording: set[Channel] = set()
        """Channels whose barrier has not come yet: everything they deliver is recorded."""
        self._countdown: dict[Channel, int] = {}
        """Channels whose barrier came: the overtaken items still to record."""
        self._buffers: dict[Channel, list[bytes]] = {}
        self._barriers_done = False

    @property
    def active(self) -> bool:
        return self.checkpoint_id is not None

    def start(self, checkpoint_id: int, open_channels: Iterable[Channel]) -> None:
        """The first barrier of ``checkpoint_id`` was polled: record every open channel."""
        if self.checkpoint_id is not None:
            raise IllegalBarrierTransitionError(
                f"checkpoint {checkpoint_id} starts recording channel state while checkpoint "
                f"{self.checkpoint_id} still records"
            )
        self.checkpoint_id = checkpoint_id
        self._recording = set(open_channels)
        self._countdown = {}
        self._buffers = {}
        self._barriers_done = False

    def on_item(self, channel: Channel, item: object) -> None:
        """The task polled ``item`` (a record batch or an event) from ``channel``."""
        if self.checkpoint_id is None:
            return
        if channel in self._recording:
            if type(item) is list:
                self._buffers.setdefault(channel, []).append(self._serialize(item))
            return
        left = self._countdown.get(channel)
        if left is None:
            return
        if type(item) is list:
            self._buffers.setdefault(channel, []).append(self._serialize(item))
        if left <= 1:
            del self._countdown[channel]
        else:
            self._countdown[channel] = left - 1

    def on_barrier(self, channel: Channel, checkpoint_id: int, overtaken: int) -> None:
        """The recorded checkpoint's barrier was polled from ``channel``; it overtook
        ``overtaken`` items there, which are still to be recorded."""
        if checkpoint_id != self.checkpoint_id:
            return
        if channel not in self._recording:
            raise IllegalBarrierTransitionError(
                f"barrier {checkpoint_id} on gate {channel[0]} channel {channel[1]}, whose channel "
                "state is not being recorded (a second barrier, or after its end)"
            )
        self._recording.discard(channel)
        if overtaken > 0:
            self._countdown[channel] = overtaken

    def on_end_of_partition(self, channel: Channel) -> None:
        self._recording.discard(channel)
        self._countdown.pop(channel, None)

    def barriers_done(self) -> None:
        """Every open channel delivered the barrier (the barrier handler is done)."""
        self._barriers_done = True

    @property
    def complete(self) -> bool:
        """The barriers all came and every overtaken item was recorded: :meth:`finish` now."""
        return (
            self.checkpoint_id is not None
            and self._barriers_done
            and not self._recording
            and not self._countdown
        )

    def finish(self) -> dict[Channel, list[bytes]]:
        """The recorded batches per channel, oldest first; the recorder is free again."""
        if not self.complete:
            raise IllegalBarrierTransitionError(
                f"channel state of checkpoint {self.checkpoint_id} is not complete "
                f"(channels still recording: {sorted(self._recording | set(self._countdown))})"
            )
        buffers = self._buffers
        self.abort()
        return buffers

    def abort(self) -> None:
        """The checkpoint was given up (or finished): drop what was recorded."""
        self.checkpoint_id = None
        self._recording = set()
        self._countdown = {}
        self._buffers = {}
        self._barriers_done = False
