"""``NumberSequenceSource(start, end)``: the longs ``start..end`` (inclusive), split across subtasks.

Each subtask owns one contiguous slice of the sequence, so the union over all
subtasks is the whole sequence exactly once at any parallelism.
"""

from __future__ import annotations

from flott.datastream.connectors.base import Boundedness, Source, SourceReader

__all__ = ["NumberSequenceSource", "split_range"]


def split_range(start: int, end_exclusive: int, subtask_index: int, parallelism: int) -> tuple[int, int]:
    """The ``[lo, hi)`` slice of ``[start, end_exclusive)`` that subtask ``subtask_index`` owns.

    Slices are contiguous and differ in size by at most one element."""
    if parallelism < 1 or not 0 <= subtask_index < parallelism:
        raise ValueError(f"invalid subtask {subtask_index} of parallelism {parallelism}")
    total = max(0, end_exclusive - start)
    lo = start + total * subtask_index // parallelism
    hi = start + total * (subtask_index + 1) // parallelism
    return lo, hi


class _RangeReader:
    """Hands out ``list(range(...))`` slices: the cheapest way to produce many ints in Python."""

    def __init__(self, lo: int, hi: int) -> None:
        self._next = lo
        self._hi = hi

    def poll_batch(self, max_records: int) -> list[int] | None:
        cur = self._next
        if cur >= self._hi:
            return None
        stop = min(cur + max_records, self._hi)
        self._next = stop
        return list(range(cur, stop))

    def close(self) -> None:
        self._next = self._hi


class NumberSequenceSource(Source):
    """A bounded source of the numbers ``start`` to ``end``, both inclusive (Flink semantics)."""

    def __init__(self, start: int, end: int) -> None:
        if end < start:
            raise ValueError(f"start ({start}) must be <= end ({end})")
        self._start = int(start)
        self._end = int(end)

    def get_from(self) -> int:
        return self._start

    def get_to(self) -> int:
        return self._end

    def get_boundedness(self) -> Boundedness:
        return Boundedness.BOUNDED

    def get_produced_type(self) -> object:
        from flott.common.typeinfo import Types

        return Types.LONG()

    def create_reader(self, subtask_index: int, parallelism: int) -> SourceReader:
        lo, hi = split_range(self._start, self._end + 1, subtask_index, parallelism)
        return _RangeReader(lo, hi)

    def __repr__(self) -> str:
        return f"NumberSequenceSource({self._start}, {self._end})"
