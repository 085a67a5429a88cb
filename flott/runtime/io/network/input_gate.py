"""Consumer side: input gates and their channels (Flink: SingleInputGate, Local/RemoteInputChannel).

A :class:`SingleInputGate` is read by exactly one consumer task thread. Its
channels signal "I have data" by putting their index into one
``queue.SimpleQueue`` (C-implemented, so the blocking wait and the wake-up
cost no Python-level locking); each channel index is in that queue at most
once, guarded by the channel's ``_notified`` flag. ``poll`` takes one buffer
from the channel at the head and, if the channel still has data, puts it back
at the tail, which makes reading round-robin fair across channels while each
channel stays in order.

* :class:`LocalInputChannel` reads the producer's subpartition in the same
  process directly: the consumer gets the very list object the producer
  emitted (no pickle, no socket).
* :class:`RemoteInputChannel` is fed by the event loop with raw frames; the
  payload is unpickled here, on the consumer task thread, and each buffer
  taken returns one credit to the producer (one loop wake-up at most per
  buffer, fewer when the loop has not yet sent the previous credits).

A priority event (an unaligned checkpoint's barrier) goes to the front of a remote channel's
queue, overtaking the frames received but not yet taken; it returns no credit (it took none),
and :meth:`SingleInputGate.overtaken` tells the task how many items it overtook: those still
belong before the barrier, so they go into the checkpoint's input channel state. A local
channel reads the producer's queue itself, where the barrier already overtook everything (as
the producer's output channel state), so nothing is overtaken on its side.
"""

from __future__ import annotations

import asyncio
import itertools
import queue
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Protocol

from flott.errors import DataExchangeError, TaskCancelledError
from flott.runtime.io.network import protocol
from flott.runtime.io.network.api import EndOfPartition
from flott.runtime.io.network.config import InputChannelSpec
from flott.runtime.io.network.partition import END_OF_PARTITION, ResultSubpartition
from flott.runtime.io.network.record_codec import deserialize

_CLOSED = -1
"""Sentinel put into a gate's queue by close() to wake a blocked poll."""


class InputChannel:
    """One channel of a gate: reads one subpartition of one producer."""

    __slots__ = ("_gate_queue", "index", "num_buffers_received", "num_bytes_received", "spec")

    def __init__(self, gate: SingleInputGate, index: int, spec: InputChannelSpec) -> None:
        self._gate_queue = gate._queue
        self.index = index
        self.spec = spec
        self.num_buffers_received = 0
        self.num_bytes_received = 0

    def take(self) -> tuple[object, bool]:
        """Consumer thread, after a notification: (records list or event, more queued?)."""
        raise NotImplementedError

    def release(self) -> None:
        """The gate closed: tell the producer its consumer went away (unless fully consumed)."""
        raise NotImplementedError

    @property
    def num_queued_buffers(self) -> int:
        return 0

    @property
    def last_overtaken(self) -> int:
        """Items the priority event taken last overtook in this channel's own queue."""
        return 0

    def start_recording(self, after_barrier: bool) -> bool:
        """Unaligned checkpoint: record this channel's in-flight data where it arrives; False if
        the channel cannot (a local one: the task records what it polls instead)."""
        return False

    def take_recording(self) -> list[bytes]:
        """The payloads recorded since :meth:`start_recording`, once the barrier was polled."""
        return []

    def describe(self) -> str:
        return f"partition {self.spec.partition_id} subpartition {self.spec.subpartition_index}"


class LocalInputChannel(InputChannel):
    """Reads a subpartition of the same ShuffleEnvironment: hands list objects over directly."""

    __slots__ = ("_error", "_lock", "_released", "_sub")

    is_remote = False

    def __init__(self, gate: SingleInputGate, index: int, spec: InputChannelSpec) -> None:
        super().__init__(gate, index, spec)
        self._lock = threading.Lock()
        self._sub: ResultSubpartition | None = None
        self._error: str | None = None
        self._released = False

    # SubpartitionReader
    def serialize(self, records: list, encode: Callable[[list], bytes]) -> object:
        return records

    def from_payload(self, payload: bytes) -> object:
        return deserialize(payload)

    def notify_data_available(self) -> None:
        self._gate_queue.put(self.index)

    def notify_released(self) -> None:
        self._gate_queue.put(self.index)

    def attach(self, sub: ResultSubpartition) -> None:
        """Become the subpartition's reader (any thread). Fails the channel if that is refused."""
        with self._lock:
            if self._released:
                return
            self._sub = sub
            try:
                sub.attach_reader(self)
            except DataExchangeError as e:
                self._sub = None
                self._fail_locked(str(e))

    def fail(self, message: str) -> None:
        with self._lock:
            self._fail_locked(message)

    def _fail_locked(self, message: str) -> None:
        if self._error is None and not self._released:
            self._error = message
            self._gate_queue.put(self.index)

    def take(self) -> tuple[object, bool]:
        if self._error is not None:
            raise DataExchangeError(self._error)
        sub = self._sub
        assert sub is not None, "local channel notified before being attached"
        item, more = sub.take_one()
        if type(item) is list:
            self.num_buffers_received += 1
        return item, more

    def release(self) -> None:
        with self._lock:
            self._released = True
            sub = self._sub
        if sub is not None:
            sub.consumer_gone(f"consumer of {self.describe()} (local) went away")

    @property
    def num_queued_buffers(self) -> int:
        sub = self._sub
        return sub.num_queued_buffers if sub is not None else 0


class CreditSink(Protocol):
    """What a remote channel needs from its network connection (event-loop thread only)."""

    def send_credit(self, receiver_id: int, credit: int) -> None: ...

    def cancel(self, channel: RemoteInputChannel) -> None: ...


class RemoteInputChannel(InputChannel):
    """Reads a subpartition of another TaskExecutor through a (shared) TCP connection."""

    __slots__ = (
        "_client",
        "_credit_batch",
        "_credit_flush_scheduled",
        "_eop_received",
        "_error",
        "_frames",
        "_lock",
        "_loop",
        "_notified",
        "_num_priority",
        "_overtaken",
        "_recorded",
        "_recording",
        "_taken_overtaken",
        "_unannounced_credit",
        "initial_credit",
        "receiver_id",
        "released",
    )

    def __init__(
        self,
        gate: SingleInputGate,
        index: int,
        spec: InputChannelSpec,
        receiver_id: int,
        initial_credit: int,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        super().__init__(gate, index, spec)
        self.receiver_id = receiver_id
        self.initial_credit = initial_credit
        # Announce credit in groups of half the window: halves the loop wake-ups, and the
        # producer still holds more than half its credit, so it never waits on the consumer.
        self._credit_batch = max(1, initial_credit // 2)
        self._loop = loop
        self._lock = threading.Lock()
        self._frames: deque[tuple[int, memoryview | None]] = deque()
        self._notified = False
        self._num_priority = 0
        self._overtaken: deque[int] = deque()
        """Per priority frame at the front, how many frames it overtook."""
        self._taken_overtaken = 0
        self._recording = False
        self._recorded: list[bytes] = []
        self._error: str | None = None
        self._eop_received = False
        self._unannounced_credit = 0
        self._credit_flush_scheduled = False
        self._client: CreditSink | None = None
        self.released = False

    # ------------------------------------------------------------------ event-loop thread

    def set_client(self, client: CreditSink | None) -> None:
        self._client = client

    @property
    def eop_received(self) -> bool:
        return self._eop_received

    def on_frame(self, msg_type: int, payload: memoryview) -> None:
        """A BUFFER or EVENT frame arrived."""
        with self._lock:
            if self._recording and msg_type == protocol.BUFFER:
                self._recorded.append(bytes(payload))
            self._frames.append((msg_type, payload))
            if self._notified:
                return
            self._notified = True
        self._gate_queue.put(self.index)

    def on_priority_frame(self, payload: memoryview) -> None:
        """A PRIORITY_EVENT frame: queued ahead of every frame but earlier priority ones."""
        with self._lock:
            self._recording = False  # the barrier: what follows is after it
            frames = self._frames
            self._overtaken.append(len(frames) - self._num_priority)
            frames.insert(self._num_priority, (protocol.PRIORITY_EVENT, payload))
            self._num_priority += 1
            if self._notified:
                return
            self._notified = True
        self._gate_queue.put(self.index)

    def on_end_of_partition(self) -> None:
        with self._lock:
            self._recording = False
            self._eop_received = True
            self._frames.append((protocol.END_OF_PARTITION, None))
            if self._notified:
                return
            self._notified = True
        self._gate_queue.put(self.index)

    def on_error(self, message: str) -> None:
        """The request failed or the connection broke; ignored once EndOfPartition arrived."""
        with self._lock:
            if self._eop_received or self._error is not None:
                return
            self._error = message
            if self._notified:
                return
            self._notified = True
        self._gate_queue.put(self.index)

    def _flush_credit(self) -> None:
        with self._lock:
            credit = self._unannounced_credit
            self._unannounced_credit = 0
            self._credit_flush_scheduled = False
            done = self._eop_received or self._error is not None
        client = self._client
        if credit and client is not None and not done and not self.released:
            client.send_credit(self.receiver_id, credit)

    def _cancel(self) -> None:
        client = self._client
        if client is not None and not self._eop_received:
            client.cancel(self)

    # ------------------------------------------------------------------ consumer thread

    def take(self) -> tuple[object, bool]:
        with self._lock:
            if self._error is not None:
                raise DataExchangeError(self._error)
            msg_type, payload = self._frames.popleft()
            more = bool(self._frames)
            if not more:
                self._notified = False
            schedule = False
            if msg_type == protocol.PRIORITY_EVENT:
                self._num_priority -= 1
                self._taken_overtaken = self._overtaken.popleft()
            elif msg_type != protocol.END_OF_PARTITION:
                self._unannounced_credit += 1
                if not self._credit_flush_scheduled and self._unannounced_credit >= self._credit_batch:
                    self._credit_flush_scheduled = schedule = True
        if schedule:
            try:
                self._loop.call_soon_threadsafe(self._flush_credit)
            except RuntimeError:  # loop closed: the environment is shutting down
                pass
        if payload is None:
            return END_OF_PARTITION, more
        self.num_bytes_received += len(payload)
        try:
            item = deserialize(payload)
        except Exception as e:
            raise DataExchangeError(f"cannot deserialise a buffer of {self.describe()}: {e!r}") from e
        if msg_type == protocol.BUFFER:
            self.num_buffers_received += 1
        return item, more

    def release(self) -> None:
        self.released = True
        try:
            self._loop.call_soon_threadsafe(self._cancel)
        except RuntimeError:
            pass

    @property
    def num_queued_buffers(self) -> int:
        return len(self._frames)

    @property
    def last_overtaken(self) -> int:
        return self._taken_overtaken

    def start_recording(self, after_barrier: bool) -> bool:
        """Record the in-flight data before this channel's barrier as it is (Flink's
        ChannelStatePersister): ``after_barrier``, the barrier was just polled and what it
        overtook is at the head of the queue; else, if the barrier is queued already, what it
        overtook; else everything queued now and everything arriving until the barrier does."""
        with self._lock:
            frames = self._frames
            if after_barrier:
                start, n, self._recording = 0, self._taken_overtaken, False
            elif self._num_priority:
                start, n, self._recording = self._num_priority, self._overtaken[0], False
            else:
                start, n, self._recording = 0, len(frames), not self._eop_received
            self._recorded = [
                bytes(payload)
                for msg_type, payload in itertools.islice(frames, start, start + n)
                if msg_type == protocol.BUFFER and payload is not None
            ]
        return True

    def take_recording(self) -> list[bytes]:
        with self._lock:
            recorded, self._recorded, self._recording = self._recorded, [], False
        return recorded


class SingleInputGate:
    """All channels of one task input; implements InputGate. Read by one consumer thread.

    ``poll`` returns ``(channel index, records list or event)``; each channel
    delivers its EndOfPartition once. When every channel has ended, ``poll``
    returns None at once (check :attr:`is_finished`).
    """

    def __init__(
        self,
        specs: Sequence[InputChannelSpec],
        on_close: Callable[[SingleInputGate], None] | None = None,
    ) -> None:
        self._queue: queue.SimpleQueue[int] = queue.SimpleQueue()
        self._specs = list(specs)
        self._channels: list[InputChannel] = []
        self._num_finished = 0
        self._closed = False
        self._on_close = on_close
        self.num_buffers_received = 0
        self._blocked: set[int] = set()
        self._parked: set[int] = set()
        """Blocked channels that signalled data while blocked: re-announced when unblocked."""

    def _set_channels(self, channels: list[InputChannel]) -> None:
        self._channels = channels

    @property
    def num_channels(self) -> int:
        return len(self._specs)

    @property
    def channels(self) -> list[InputChannel]:
        return list(self._channels)

    @property
    def is_finished(self) -> bool:
        """True once EndOfPartition was polled from every channel."""
        return self._num_finished >= len(self._specs)

    @property
    def is_closed(self) -> bool:
        return self._closed

    def poll(self, timeout: float | None) -> tuple[int, list | object] | None:
        """Next (channel index, records or event), or None if nothing came within ``timeout`` s.

        Raises DataExchangeError if a channel broke and TaskCancelledError if
        the gate was closed.
        """
        if self._closed:
            raise TaskCancelledError("input gate was closed")
        if self._num_finished >= len(self._specs):
            return None
        try:
            if timeout is None:
                index = self._queue.get()
            elif timeout > 0:
                index = self._queue.get(True, timeout)
            else:
                index = self._queue.get(False)
        except queue.Empty:
            return None
        if index < 0:
            self._queue.put(_CLOSED)
            raise TaskCancelledError("input gate was closed")
        if index in self._blocked:
            # Alignment: leave its data where it is. Not taking it means no credit goes back,
            # so the producer of this channel is backpressured until the checkpoint is taken.
            self._parked.add(index)
            return None
        try:
            item, more = self._channels[index].take()
        except DataExchangeError:
            if self._closed:  # closed from another thread while we were taking: that is a cancel
                raise TaskCancelledError("input gate was closed") from None
            raise
        if more:
            self._queue.put(index)
        if type(item) is list:
            self.num_buffers_received += 1
        elif type(item) is EndOfPartition:
            self._num_finished += 1
            if self._num_finished >= len(self._specs) and self._on_close is not None:
                self._on_close(self)  # fully read: the environment need not track it any more
        return index, item

    def start_recording(self, channel: int, after_barrier: bool) -> bool:
        """See :meth:`InputChannel.start_recording`."""
        return self._channels[channel].start_recording(after_barrier)

    def take_recording(self, channel: int) -> list[bytes]:
        return self._channels[channel].take_recording()

    def overtaken(self, channel: int) -> int:
        """How many items (buffers and events) the priority event just polled from ``channel``
        overtook there: the next that many items of the channel precede it."""
        return self._channels[channel].last_overtaken

    def block_channel(self, channel: int) -> None:
        self._blocked.add(channel)

    def unblock_all(self) -> None:
        self._blocked.clear()
        for index in sorted(self._parked):
            self._queue.put(index)
        self._parked.clear()

    def close(self) -> None:
        """Release every channel (producers see their consumer go away) and wake a blocked poll."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_CLOSED)
        for channel in self._channels:
            channel.release()
        if self._on_close is not None:
            self._on_close(self)

    # ------------------------------------------------------------------ metrics

    @property
    def num_bytes_received(self) -> int:
        return sum(channel.num_bytes_received for channel in self._channels)

    @property
    def num_queued_buffers(self) -> int:
        """Buffers received but not yet polled (input-side backpressure indicator)."""
        return sum(channel.num_queued_buffers for channel in self._channels)

    def __repr__(self) -> str:
        return f"SingleInputGate(channels={len(self._specs)}, finished={self._num_finished})"
