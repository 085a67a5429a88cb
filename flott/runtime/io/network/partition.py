"""Producer side: result partitions and their subpartitions (Flink: PipelinedResultPartition).

A :class:`ResultPartition` is what a producer task writes one intermediate
data set into; it has one :class:`ResultSubpartition` per consumer subtask.
Each subpartition is a bounded queue of *buffers* (whole batches of records,
or in-band events) guarded by one lock:

* the producer task thread appends with :meth:`ResultSubpartition.add` (one
  lock acquisition per buffer, and it blocks while the queue is full: that is
  backpressure);
* exactly one *reader* drains it: a local input channel (the consumer task
  thread of the same process takes the list object itself, no pickle), or a
  remote reader on the event loop that sends buffers while it holds credit.

The reader is told that data arrived only when it is not already known to be
looking (the ``_notified`` flag), so a busy consumer costs no wake-ups at all
and an idle one exactly one per buffer.

Priority events (an unaligned checkpoint's barrier, Flink's PipelinedSubpartition#add with
priority): :meth:`ResultSubpartition.add_priority_event` puts the event at the *front* of the
queue, behind earlier priority events only, without waiting for space, and returns the buffers
it overtook (they become the producer's output channel state). A priority event is queued as a
:class:`PriorityEvent` and needs no credit: a remote reader sends it even with none left, and the
consumer returns none for it, so overtaking cannot starve or inflate credit-based flow control.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol, cast

from flott.errors import DataExchangeError, TaskCancelledError
from flott.runtime.io.network.api import EndOfPartition
from flott.runtime.io.network.protocol import serialize

END_OF_PARTITION = EndOfPartition()
"""The one EndOfPartition instance the layer hands out (compare by type, not identity)."""


class PriorityEvent:
    """An event queued ahead of the buffers (see the module docstring); carries no credit."""

    __slots__ = ("event",)

    def __init__(self, event: object) -> None:
        self.event = event

_OPEN = 0
_FINISHED = 1  # EndOfPartition queued; nothing may be added any more
_RELEASED = 2  # dropped by the producer side (cancel / failover / shutdown)
_FAILED = 3  # the consumer went away before the end


class SubpartitionReader(Protocol):
    """The single consumer of a subpartition: a local channel or a remote (network) reader."""

    @property
    def is_remote(self) -> bool:
        """True if buffers should be serialised on the producer thread (see :meth:`serialize`)."""
        ...

    def serialize(self, records: list, encode: Callable[[list], bytes]) -> object:
        """Turn a batch into its wire form with ``encode`` (its payload: a pickle, or a typed
        stream's encoding); called on the producer thread, outside any lock."""
        ...

    def from_payload(self, payload: bytes) -> object:
        """A batch stored pickled (a blocking partition's) in the form this reader takes."""
        ...

    def notify_data_available(self) -> None:
        """The queue went from 'not being looked at' to non-empty. Called outside the lock."""
        ...

    def notify_released(self) -> None:
        """The producer released the subpartition; the consumer must fail. Called outside the lock."""
        ...


class ResultSubpartition:
    """Bounded queue of buffers for one consumer subtask."""

    __slots__ = (
        "_buffers",
        "_capacity",
        "_cond",
        "_failure",
        "_notified",
        "_num_priority",
        "_partition",
        "_reader",
        "_release_cause",
        "_state",
        "_waiting_producers",
        "back_pressured_time_ns",
        "consumed",
        "eop_handed_out",
        "index",
        "num_buffers_in",
        "num_buffers_out",
        "num_bytes_sent",
    )

    def __init__(self, partition: ResultPartition, index: int, capacity: int) -> None:
        self._partition = partition
        self.index = index
        self._capacity = capacity
        self._cond = threading.Condition(threading.Lock())
        self._buffers: deque[object] = deque()
        self._reader: SubpartitionReader | None = None
        self._notified = False
        self._num_priority = 0
        """Priority events at the front of ``_buffers``."""
        self._state = _OPEN
        self._failure = ""
        self._release_cause: str | None = None
        self._waiting_producers = 0
        self.num_buffers_in = 0
        self.num_buffers_out = 0
        self.num_bytes_sent = 0
        """Bytes of the frames a remote reader sent (the task's numBytesOut; local reads send none)."""
        self.back_pressured_time_ns = 0
        self.eop_handed_out = False
        self.consumed = False

    @property
    def name(self) -> str:
        return f"{self._partition.partition_id}#{self.index}"

    @property
    def num_queued_buffers(self) -> int:
        return len(self._buffers)

    @property
    def is_back_pressured(self) -> bool:
        return self._waiting_producers > 0

    @property
    def is_available(self) -> bool:
        """An add would not block: there is space, or the subpartition is no longer open (then
        the add raises at once)."""
        return len(self._buffers) < self._capacity or self._state != _OPEN

    @property
    def is_released(self) -> bool:
        return self._state == _RELEASED

    @property
    def has_consumer(self) -> bool:
        """True once a reader (local channel or remote request) is attached."""
        return self._reader is not None

    # ------------------------------------------------------------------ producer thread

    def add(self, item: object) -> None:
        """Queue one buffer (a list of records) or event; blocks while the queue is full."""
        reader = self._reader
        if reader is not None and type(item) is list and reader.is_remote:
            # Serialise on the producer thread, outside the lock: keeps the event loop
            # free for heartbeats and charges the cost to the producer.
            item = reader.serialize(item, self._partition.encode_records)
        with self._cond:
            if self._state != _OPEN or len(self._buffers) >= self._capacity:
                self._await_space_locked()
            self._buffers.append(item)
            self.num_buffers_in += 1
            reader = self._reader
            if reader is None or self._notified:
                return
            self._notified = True
        reader.notify_data_available()

    def _await_space_locked(self) -> None:
        started = 0
        try:
            while True:
                state = self._state
                if state == _RELEASED:
                    raise TaskCancelledError(f"result partition {self.name} was released")
                if state == _FAILED:
                    raise DataExchangeError(self._failure)
                if state == _FINISHED:
                    raise DataExchangeError(f"result partition {self.name} is already finished")
                if len(self._buffers) < self._capacity:
                    return
                if not started:
                    started = time.perf_counter_ns()
                    self._waiting_producers += 1
                self._cond.wait()
        finally:
            if started:
                self._waiting_producers -= 1
                self.back_pressured_time_ns += time.perf_counter_ns() - started

    def add_priority_event(self, event: object) -> list[object]:
        """Queue ``event`` ahead of every buffer (behind earlier priority events); never blocks.

        Returns what it overtook, oldest first: record batches (lists, or already-serialised
        buffers of a remote reader) and events. Raises like :meth:`add` once the subpartition is
        no longer open."""
        with self._cond:
            state = self._state
            if state == _RELEASED:
                raise TaskCancelledError(f"result partition {self.name} was released")
            if state == _FAILED:
                raise DataExchangeError(self._failure)
            if state == _FINISHED:
                raise DataExchangeError(f"result partition {self.name} is already finished")
            buffers = self._buffers
            overtaken = list(buffers)[self._num_priority :]
            buffers.insert(self._num_priority, PriorityEvent(event))
            self._num_priority += 1
            self.num_buffers_in += 1
            reader = self._reader
            if reader is None or (self._notified and not reader.is_remote):
                return overtaken
            # A remote reader is woken even if notified already: out of credit, it would not look
            # again before new credit comes, and this event needs none (its drain is idempotent;
            # a local reader's notification puts the channel into its gate's queue, once only).
            self._notified = True
        reader.notify_data_available()
        return overtaken

    def finish(self) -> None:
        """Queue EndOfPartition. Does not block: the end marker may exceed the capacity by one."""
        with self._cond:
            if self._state == _FINISHED:
                return
            if self._state == _RELEASED:
                raise TaskCancelledError(f"result partition {self.name} was released")
            if self._state == _FAILED:
                raise DataExchangeError(self._failure)
            self._state = _FINISHED
            self._buffers.append(END_OF_PARTITION)
            reader = self._reader
            if reader is None or self._notified:
                return
            self._notified = True
        reader.notify_data_available()

    def release(self, cause: str | None = None) -> None:
        """Drop everything, wake a blocked producer (TaskCancelledError) and fail the consumer."""
        with self._cond:
            if self.consumed or self._state in (_RELEASED, _FAILED):
                return
            self._state = _RELEASED
            self._release_cause = cause
            self._buffers.clear()
            self._num_priority = 0
            self._cond.notify_all()
            reader = self._reader
        if reader is not None:
            reader.notify_released()

    # ------------------------------------------------------------------ reader side

    def attach_reader(self, reader: SubpartitionReader) -> None:
        """Bind the one consumer. Raises DataExchangeError if there already is one or it is gone."""
        with self._cond:
            if self._reader is not None:
                raise DataExchangeError(f"subpartition {self.name} is already being consumed")
            if self._state == _RELEASED:
                raise DataExchangeError(self._consumer_side_error())
            if self._state == _FAILED:
                raise DataExchangeError(self._failure)
            self._reader = reader
            if not self._buffers:
                return
            self._notified = True
        reader.notify_data_available()

    def take_one(self) -> tuple[object, bool]:
        """Local reader (consumer task thread): next buffer and whether more are queued.

        Only called after a notification, so the queue is not empty unless released.
        """
        with self._cond:
            if self._state >= _RELEASED:
                raise DataExchangeError(self._consumer_side_error())
            item = self._buffers.popleft()
            more = bool(self._buffers)
            if not more:
                self._notified = False
            if self._num_priority:
                self._num_priority -= 1
                item = cast(PriorityEvent, item).event
            self.num_buffers_out += 1
            if self._waiting_producers:
                self._cond.notify()
            if type(item) is not EndOfPartition:
                return item, more
            self.eop_handed_out = True
            self.consumed = True
        self._partition._on_subpartition_consumed()
        return item, more

    def take_many(self, max_buffers: int) -> tuple[list[object], str | None]:
        """Remote reader (event loop): up to ``max_buffers`` buffers (the reader's credit) plus
        the priority events queued ahead of them (they need none), or the error to report."""
        with self._cond:
            if self._state >= _RELEASED:
                return [], self._consumer_side_error()
            priority = self._num_priority
            if max_buffers <= 0 and not priority:
                return [], None
            buffers = self._buffers
            n = min(max(max_buffers, 0) + priority, len(buffers))
            self._num_priority = priority - min(n, priority)
            if n == len(buffers):
                taken = list(buffers)
                buffers.clear()
                self._notified = False
            else:
                popleft = buffers.popleft
                taken = [popleft() for _ in range(n)]
            self.num_buffers_out += n
            if n and self._waiting_producers:
                self._cond.notify(n)
            if n and type(taken[-1]) is EndOfPartition:
                self.eop_handed_out = True
            return taken, None

    def mark_consumed(self) -> None:
        """The remote consumer acknowledged EndOfPartition."""
        with self._cond:
            if self.consumed or self._state >= _RELEASED:
                return
            self.consumed = True
        self._partition._on_subpartition_consumed()

    def consumer_gone(self, message: str) -> None:
        """The consumer cancelled or its connection broke: fail the producer (unless consumed)."""
        with self._cond:
            if self.consumed or self._state >= _RELEASED:
                return
            self._state = _FAILED
            self._failure = message
            self._buffers.clear()
            self._num_priority = 0
            self._cond.notify_all()
        self._partition._on_subpartition_failed(message)

    def _consumer_side_error(self) -> str:
        if self._state == _RELEASED:
            if self._release_cause:
                return f"result partition {self.name}: its producer failed: {self._release_cause}"
            return f"result partition {self.name} was released by its producer"
        return self._failure


class ResultPartition:
    """One producer subtask's output for one intermediate data set; implements ResultPartitionWriter.

    All producer methods are meant for the one task thread that owns the
    partition. Metrics properties may be read from any thread.
    """

    _subpartition_type: type[ResultSubpartition] = ResultSubpartition

    def __init__(
        self,
        partition_id: str,
        num_subpartitions: int,
        buffers_per_channel: int,
        on_done: Callable[[ResultPartition, str], None] | None = None,
    ) -> None:
        if num_subpartitions < 0:
            raise ValueError(f"num_subpartitions must be >= 0, got {num_subpartitions}")
        self.partition_id = partition_id
        self._subpartitions = [
            self._subpartition_type(self, i, buffers_per_channel) for i in range(num_subpartitions)
        ]
        self._on_done = on_done
        self._state_cond = threading.Condition(threading.Lock())
        self._num_consumed = 0
        self._all_consumed = False
        self._failure: str | None = None
        self._released = False
        self._done_reported = False
        self.encode_records: Callable[[list], bytes] = serialize
        """How a batch for a remote consumer (or a blocking partition) becomes a payload: pickle,
        unless the writer of a typed stream sets its schema-driven encoder (:meth:`set_record_encoder`)."""

    # ------------------------------------------------------------------ ResultPartitionWriter

    @property
    def num_subpartitions(self) -> int:
        return len(self._subpartitions)

    def emit(self, subpartition: int, records: list) -> None:
        """Queue a batch for one consumer; ownership of ``records`` passes to the exchange layer."""
        self._subpartitions[subpartition].add(records)

    def set_record_encoder(self, encode: Callable[[list], bytes]) -> None:
        """Use ``encode`` for this partition's batches: only for records checked against the
        declared type the encoder was built from (see record_codec.py)."""
        self.encode_records = encode

    def broadcast_event(self, event: object) -> None:
        """Queue an in-band event on every subpartition, after everything emitted before it.

        An event takes a buffer slot like a batch does (and blocks the same way
        under backpressure), so a flood of watermarks cannot grow memory either.
        """
        if isinstance(event, list):
            raise TypeError("events must not be lists (lists are record batches)")
        if isinstance(event, EndOfPartition):
            raise TypeError("use finish() to end a partition")
        for sub in self._subpartitions:
            sub.add(event)

    def broadcast_priority_event(self, event: object) -> list[list[object]]:
        """Put ``event`` at the front of every subpartition (never blocks); per subpartition,
        the buffers it overtook (see :meth:`ResultSubpartition.add_priority_event`)."""
        if isinstance(event, (list, EndOfPartition)):
            raise TypeError("a priority event must be an event")
        return [sub.add_priority_event(event) for sub in self._subpartitions]

    def finish(self) -> None:
        """Queue EndOfPartition on every subpartition (never blocks)."""
        for sub in self._subpartitions:
            sub.finish()
        if not self._subpartitions:
            self._on_subpartition_consumed()

    def release(self, cause: str | None = None) -> None:
        """Drop all data, wake blocked producers with TaskCancelledError, fail the consumers."""
        with self._state_cond:
            if self._released:
                return
            self._released = True
            self._state_cond.notify_all()
        for sub in self._subpartitions:
            sub.release(cause)
        self._report_done("released")

    # ------------------------------------------------------------------ lifecycle

    def wait_until_consumed(self, timeout: float | None = None) -> bool:
        """Block until every consumer received EndOfPartition; False if ``timeout`` passed first.

        Lets the producer task report FINISHED only when downstream got
        everything (a finished TaskExecutor may otherwise be torn down with
        buffers still queued). Raises DataExchangeError if a consumer went away
        first and TaskCancelledError if the partition was released.
        """
        with self._state_cond:
            self._state_cond.wait_for(
                lambda: self._all_consumed or self._failure is not None or self._released, timeout
            )
            if self._all_consumed:
                return True
            if self._released:
                raise TaskCancelledError(f"result partition {self.partition_id} was released")
            if self._failure is not None:
                raise DataExchangeError(self._failure)
            return False

    @property
    def is_consumed(self) -> bool:
        return self._all_consumed

    @property
    def is_released(self) -> bool:
        return self._released

    def subpartition(self, index: int) -> ResultSubpartition:
        if not 0 <= index < len(self._subpartitions):
            raise DataExchangeError(
                f"result partition {self.partition_id} has {len(self._subpartitions)} subpartitions, "
                f"no index {index}"
            )
        return self._subpartitions[index]

    def _on_subpartition_consumed(self) -> None:
        with self._state_cond:
            self._num_consumed += 1
            done = self._num_consumed >= len(self._subpartitions) and not self._all_consumed
            if done:
                self._all_consumed = True
                self._state_cond.notify_all()
        if done:
            self._report_done("consumed")

    def _on_subpartition_failed(self, message: str) -> None:
        with self._state_cond:
            if self._failure is None:
                self._failure = message
            self._state_cond.notify_all()

    def _report_done(self, reason: str) -> None:
        with self._state_cond:
            if self._done_reported:
                return
            self._done_reported = True
            self._state_cond.notify_all()
        if self._on_done is not None:
            self._on_done(self, reason)

    # ------------------------------------------------------------------ metrics

    @property
    def num_queued_buffers(self) -> int:
        """Buffers produced but not yet handed to a consumer (for backpressure metrics)."""
        return sum(sub.num_queued_buffers for sub in self._subpartitions)

    def queued_buffers_per_subpartition(self) -> list[int]:
        return [sub.num_queued_buffers for sub in self._subpartitions]

    def is_available(self) -> bool:
        """Every subpartition can take a buffer without blocking (Flink's output availability)."""
        return all(sub.is_available for sub in self._subpartitions)

    @property
    def is_back_pressured(self) -> bool:
        """True while the producer is blocked in emit because a subpartition is full."""
        return any(sub.is_back_pressured for sub in self._subpartitions)

    @property
    def back_pressured_time_ns(self) -> int:
        """Total time producers spent blocked in emit (monotonic counter)."""
        return sum(sub.back_pressured_time_ns for sub in self._subpartitions)

    @property
    def num_buffers_out(self) -> int:
        """Buffers (including events) handed to consumers."""
        return sum(sub.num_buffers_out for sub in self._subpartitions)

    @property
    def num_bytes_sent(self) -> int:
        """Bytes sent to remote consumers (Flink's numBytesOut)."""
        return sum(sub.num_bytes_sent for sub in self._subpartitions)

    @property
    def num_buffers_in(self) -> int:
        """Buffers (including events, excluding EndOfPartition) queued by the producer."""
        return sum(sub.num_buffers_in for sub in self._subpartitions)

    def __repr__(self) -> str:
        return (
            f"ResultPartition({self.partition_id!r}, subpartitions={len(self._subpartitions)}, "
            f"queued={self.num_queued_buffers})"
        )
