"""The in-flight elements of an async wait operator, in emission order (Flink's StreamElementQueue).

Async I/O keeps up to ``capacity`` elements in flight per subtask. This queue is
the operator's bookkeeping of them, and decides *when* a completed element may
leave:

* :class:`OrderedStreamElementQueue`: in input order. A completed element waits
  until every element before it completed.
* :class:`UnorderedStreamElementQueue`: as soon as it completed, but never across
  a watermark. Watermarks split the queue into segments (Flink's design); records
  of one segment leave in completion order, a watermark leaves once every record
  before it left, and records after it only after the watermark. So event time
  stays correct downstream while records between watermarks overtake each other.

Watermarks occupy capacity as records do (as in Flink), and a watermark entry is
complete at once.

The queue is a pure, single-threaded state machine: the operator calls it on its
task thread only (completions from the asyncio thread are handed over first), so
it needs no locks and is tested without threads. It never blocks: :meth:`try_put`
refuses when full and the operator decides how to wait.
"""

from __future__ import annotations

from collections import deque
from typing import Any


class QueueEntry:
    """One element in the queue: a record awaiting its results, or a watermark."""

    __slots__ = ("results", "seq")

    def __init__(self) -> None:
        self.seq = 0
        """Position in input order (set by the queue; orders a snapshot of the unordered queue)."""
        self.results: list[Any] | None = None
        """The record's outputs once completed; a watermark's is ``[]`` from the start."""

    @property
    def done(self) -> bool:
        return self.results is not None


class RecordEntry(QueueEntry):
    """A record: its value and event timestamp (None: the path carries none), and its results."""

    __slots__ = ("segment", "timestamp", "value")

    def __init__(self, value: Any, timestamp: int | None) -> None:
        super().__init__()
        self.value = value
        self.timestamp = timestamp
        self.segment: _Segment | None = None


class WatermarkEntry(QueueEntry):
    __slots__ = ("timestamp",)

    def __init__(self, timestamp: int) -> None:
        super().__init__()
        self.timestamp = timestamp
        self.results = []


class StreamElementQueue:
    """Common contract of the ordered and unordered queues."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"the capacity of an async operator must be at least 1, got {capacity}")
        self.capacity = capacity
        self._size = 0
        self._seq = 0

    def size(self) -> int:
        """Entries not yet popped (in flight or completed and waiting for their turn)."""
        return self._size

    def is_full(self) -> bool:
        return self._size >= self.capacity

    def is_empty(self) -> bool:
        return self._size == 0

    def try_put(self, value: Any, timestamp: int | None = None) -> RecordEntry | None:
        """Add a record; its entry is to be :meth:`complete`-d later. None: the queue is full."""
        if self._size >= self.capacity:
            return None
        entry = RecordEntry(value, timestamp)
        self._seq += 1
        entry.seq = self._seq
        self._size += 1
        self._add_record(entry)
        return entry

    def try_put_watermark(self, timestamp: int) -> bool:
        """Add a watermark (complete at once); False: the queue is full."""
        if self._size >= self.capacity:
            return False
        entry = WatermarkEntry(timestamp)
        self._seq += 1
        entry.seq = self._seq
        self._size += 1
        self._add_watermark(entry)
        return True

    def complete(self, entry: RecordEntry, results: list[Any]) -> None:
        """The record's outputs are known; a second completion of the same entry is ignored."""
        if entry.results is not None:
            return
        entry.results = results
        self._on_complete(entry)

    def pop_completed(self) -> list[QueueEntry]:
        """Every entry that may leave now, in the order it must be emitted."""
        popped = self._pop()
        self._size -= len(popped)
        return popped

    def entries(self) -> list[QueueEntry]:
        """Every entry still in the queue, in input order (what a checkpoint stores)."""
        raise NotImplementedError

    def _add_record(self, entry: RecordEntry) -> None:
        raise NotImplementedError

    def _add_watermark(self, entry: WatermarkEntry) -> None:
        raise NotImplementedError

    def _on_complete(self, entry: RecordEntry) -> None:
        raise NotImplementedError

    def _pop(self) -> list[QueueEntry]:
        raise NotImplementedError


class OrderedStreamElementQueue(StreamElementQueue):
    """Entries leave in the order they came in."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self._queue: deque[QueueEntry] = deque()

    def entries(self) -> list[QueueEntry]:
        return list(self._queue)

    def _add_record(self, entry: RecordEntry) -> None:
        self._queue.append(entry)

    def _add_watermark(self, entry: WatermarkEntry) -> None:
        self._queue.append(entry)

    def _on_complete(self, entry: RecordEntry) -> None:
        pass

    def _pop(self) -> list[QueueEntry]:
        queue = self._queue
        popped: list[QueueEntry] = []
        while queue and queue[0].results is not None:
            popped.append(queue.popleft())
        return popped


def _input_order(entry: QueueEntry) -> int:
    return entry.seq


class _Segment:
    """Records between two watermarks (or one watermark alone): completed ones leave in any order."""

    __slots__ = ("completed", "incomplete")

    def __init__(self) -> None:
        self.incomplete: set[QueueEntry] = set()
        self.completed: deque[QueueEntry] = deque()

    def is_empty(self) -> bool:
        return not self.incomplete and not self.completed


class UnorderedStreamElementQueue(StreamElementQueue):
    """Records leave as they complete, within the watermarks around them."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self._segments: deque[_Segment] = deque()

    def entries(self) -> list[QueueEntry]:
        out: list[QueueEntry] = []
        for segment in self._segments:
            out.extend(sorted((*segment.incomplete, *segment.completed), key=_input_order))
        return out

    def _last_segment(self) -> _Segment:
        if not self._segments:
            self._segments.append(_Segment())
        return self._segments[-1]

    def _add_record(self, entry: RecordEntry) -> None:
        segment = self._last_segment()
        entry.segment = segment
        segment.incomplete.add(entry)

    def _add_watermark(self, entry: WatermarkEntry) -> None:
        segments = self._segments
        if segments and segments[-1].is_empty():
            segment = segments[-1]  # nothing waits before it: reuse the drained segment
        else:
            segment = _Segment()
            segments.append(segment)
        segment.completed.append(entry)
        segments.append(_Segment())  # records after the watermark wait for it

    def _on_complete(self, entry: RecordEntry) -> None:
        segment = entry.segment
        assert segment is not None
        if entry in segment.incomplete:
            segment.incomplete.discard(entry)
            segment.completed.append(entry)

    def _pop(self) -> list[QueueEntry]:
        segments = self._segments
        popped: list[QueueEntry] = []
        while segments:
            head = segments[0]
            popped.extend(head.completed)
            head.completed.clear()
            if head.incomplete:
                break
            if len(segments) == 1:
                break  # keep the one empty segment for the next records
            segments.popleft()
        return popped
