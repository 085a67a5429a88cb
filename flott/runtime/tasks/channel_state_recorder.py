"""An unaligned checkpoint's input channel state, recorded on the task's thread (Flink's
ChannelStatePersister per input channel, fed to the ChannelStateWriter).

The operators' snapshot is taken on the checkpoint's *first* barrier, so whatever a channel
delivers before its own barrier is not in that snapshot: it is recorded (and processed as usual)
and replayed into the operators on restore, before any new input.

A remote channel records itself where its frames arrive (``ChannelSource.start_recording``, see
input_gate.py): what is queued at the start (or what its already queued barrier overtook) and
what arrives until its barrier does. So the checkpoint's input state is complete as soon as the
barriers are *polled*; the task need not first process what they overtook, which under
backpressure would take as long as an aligned checkpoint. A local channel has no queue of its
own (the barrier overtook the producer's queue, which is the producer's output state), so for
it the task records what it polls after :meth:`start` until the channel's barrier; should a
source of channels report a number of overtaken items, those are recorded as they are polled.

A channel that ends (EndOfPartition) ends its recording too. Only record batches are kept
(serialised at once: the task goes on with the same list objects); events in between are
counted but not kept (watermarks are regenerated after a restore).

Recording the same channel past its end raises
:class:`~flott.errors.IllegalBarrierTransitionError`. Synchronous, no I/O: tested without sockets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from flott.errors import IllegalBarrierTransitionError

Channel = tuple[int, int]
"""(gate index, channel index)."""


class ChannelSource(Protocol):
    """The task's input gates, as the recorder sees them."""

    def start_recording(self, channel: Channel, after_barrier: bool) -> bool: ...

    def take_recording(self, channel: Channel) -> list[bytes]: ...

    def overtaken(self, channel: Channel) -> int: ...


class _PollOnly:
    def start_recording(self, channel: Channel, after_barrier: bool) -> bool:
        return False

    def take_recording(self, channel: Channel) -> list[bytes]:
        return []

    def overtaken(self, channel: Channel) -> int:
        return 0


class InputChannelStateRecorder:
    """Records one checkpoint's in-flight input at a time (unaligned checkpoints allow one)."""

    def __init__(self, serialize: Callable[[list], bytes], channels: ChannelSource | None = None) -> None:
        self._serialize = serialize
        self._channels: ChannelSource = channels if channels is not None else _PollOnly()
        self._self_recording: set[Channel] = set()
        """Channels that record themselves where data arrives (remote)."""
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

    def start(
        self, checkpoint_id: int, open_channels: Iterable[Channel], first: Channel | None = None
    ) -> None:
        """The first barrier of ``checkpoint_id`` was polled (from ``first``): record every open
        channel."""
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
        start = self._channels.start_recording
        self._self_recording = {c for c in self._recording if start(c, c == first)}

    def on_item(self, channel: Channel, item: object) -> None:
        """The task polled ``item`` (a record batch or an event) from ``channel``."""
        if self.checkpoint_id is None or channel in self._self_recording:
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

    def on_barrier(self, channel: Channel, checkpoint_id: int, overtaken: int | None = None) -> None:
        """The recorded checkpoint's barrier was polled from ``channel``; it overtook
        ``overtaken`` items there (None: ask the channel source), which are still to be recorded
        unless the channel records itself."""
        if checkpoint_id != self.checkpoint_id:
            return
        if channel not in self._recording:
            raise IllegalBarrierTransitionError(
                f"barrier {checkpoint_id} on gate {channel[0]} channel {channel[1]}, whose channel "
                "state is not being recorded (a second barrier, or after its end)"
            )
        self._recording.discard(channel)
        if channel in self._self_recording:
            self._collect(channel)
            return
        if overtaken is None:
            overtaken = self._channels.overtaken(channel)
        if overtaken > 0:
            self._countdown[channel] = overtaken

    def _collect(self, channel: Channel) -> None:
        self._self_recording.discard(channel)
        recorded = self._channels.take_recording(channel)
        if recorded:
            self._buffers.setdefault(channel, []).extend(recorded)

    def on_end_of_partition(self, channel: Channel) -> None:
        if self.checkpoint_id is None:
            return
        self._recording.discard(channel)
        self._countdown.pop(channel, None)
        if channel in self._self_recording:
            self._collect(channel)

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
        for channel in self._self_recording:
            self._channels.take_recording(channel)  # stops it
        self._self_recording = set()
