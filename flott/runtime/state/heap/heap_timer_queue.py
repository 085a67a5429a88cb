"""Timers of one operator and time domain, kept as keyed state (Flink's ``HeapPriorityQueueSet`` of
``TimerHeapInternalTimer``).

A timer is ``(timestamp, key, namespace)``; registering one that exists is a
no-op (timers are deduplicated per key and namespace, as in Flink), deleting
one that does not exist is a no-op too. Timers fire in timestamp order.

Layout: a bucket per distinct timestamp (an insertion-ordered dict of
``(key, namespace)``) and a min-heap of the timestamps. Many keys usually
share a timestamp (every key's window ends at the same instant), so the heap
holds few entries and registering a timer is a dict lookup and insert;
deletion removes from the bucket at once (no tombstones to skip later).

The queue belongs to the keyed state backend: it is split per key group like
any state table (:meth:`entries_by_key_group`), so checkpoints and rescaling
cover timers without special cases.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from flott.runtime.state.backend import Timer
from flott.runtime.state.key_groups import assign_to_key_group

__all__ = ["HeapTimerQueue", "Timer"]


class HeapTimerQueue:
    """Deduplicated timers ordered by timestamp."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._buckets: dict[int, dict[tuple[Any, Any], None]] = {}
        self._times: list[int] = []
        self._size = 0
        self._restore_listeners: list[Callable[[], None]] = []

    def __len__(self) -> int:
        return self._size

    def add(self, timestamp: int, key: Any, namespace: Any) -> bool:
        """Register a timer; False if it was registered already."""
        bucket = self._buckets.get(timestamp)
        if bucket is None:
            self._buckets[timestamp] = {(key, namespace): None}
            heapq.heappush(self._times, timestamp)
        else:
            entry = (key, namespace)
            if entry in bucket:
                return False
            bucket[entry] = None
        self._size += 1
        return True

    def remove(self, timestamp: int, key: Any, namespace: Any) -> bool:
        """Delete a timer; False if there was none."""
        bucket = self._buckets.get(timestamp)
        if bucket is None or bucket.pop((key, namespace), bucket) is bucket:
            return False
        self._size -= 1
        if not bucket:
            # The heap keeps the timestamp until it is reached; a new bucket may reuse it.
            del self._buckets[timestamp]
        return True

    def contains(self, timestamp: int, key: Any, namespace: Any) -> bool:
        bucket = self._buckets.get(timestamp)
        return bucket is not None and (key, namespace) in bucket

    def peek_timestamp(self) -> int | None:
        """The earliest timer's timestamp (None: no timers)."""
        times = self._times
        buckets = self._buckets
        while times and times[0] not in buckets:
            heapq.heappop(times)
        return times[0] if times else None

    def poll(self, up_to: int) -> Timer | None:
        """Remove and return the earliest timer due at ``up_to`` (None: none is due).

        Timers sharing a timestamp come out in no particular order, as in Flink.
        A timer registered while firing is seen by the next ``poll``, so firing
        in a loop also fires timers registered for an already-passed time.
        """
        times = self._times
        buckets = self._buckets
        while times:
            timestamp = times[0]
            if timestamp > up_to:
                return None
            bucket = buckets.get(timestamp)
            if bucket:
                (key, namespace), _ = bucket.popitem()
                self._size -= 1
                if not bucket:
                    del buckets[timestamp]
                    heapq.heappop(times)
                return timestamp, key, namespace
            heapq.heappop(times)
            if bucket is not None:
                del buckets[timestamp]
        return None

    def __iter__(self) -> Iterator[Timer]:
        """Every timer, earliest timestamp first (a snapshot: the queue may change meanwhile)."""
        return iter([(t, key, ns) for t in sorted(self._buckets) for (key, ns) in list(self._buckets[t])])

    def timers_of_key(self, key: Any) -> list[tuple[int, Any]]:
        """``(timestamp, namespace)`` of every timer of ``key`` (a scan: for tests and tools)."""
        return [(t, ns) for t, bucket in sorted(self._buckets.items()) for (k, ns) in bucket if k == key]

    def entries_by_key_group(self, max_parallelism: int) -> dict[int, list[Timer]]:
        """Timers split per key group: what a checkpoint writes and a rescale redistributes."""
        out: dict[int, list[Timer]] = {}
        for timestamp, bucket in self._buckets.items():
            for key, namespace in bucket:
                out.setdefault(assign_to_key_group(key, max_parallelism), []).append(
                    (timestamp, key, namespace)
                )
        return out

    def restore(self, timers: Iterable[Timer]) -> None:
        """Add restored timers (deduplicated like registrations), then tell the restore listeners."""
        for timestamp, key, namespace in timers:
            self.add(timestamp, key, namespace)
        for listener in list(self._restore_listeners):
            listener()

    def add_restore_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` after each :meth:`restore` (a timer service re-arms its wake-up)."""
        self._restore_listeners.append(listener)

    def clear(self) -> None:
        self._buckets.clear()
        self._times.clear()
        self._size = 0
