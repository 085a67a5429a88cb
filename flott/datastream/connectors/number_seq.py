"""``NumberSequenceSource(start, end)``: the longs ``start..end`` (inclusive), split across subtasks.

Each subtask owns one contiguous slice of the sequence, so the union over all
subtasks is the whole sequence exactly once at any parallelism.

Checkpointing: a split is the tuple ``(next, end_exclusive)`` of the numbers still
to emit; :meth:`_RangeSplitsReader.snapshot_state` returns the reader's unfinished
splits and :meth:`NumberSequenceSource.restore_reader` reads any list of them, in
order. The same index-range reader state serves ``DataGeneratorSource`` and
``CollectionSource``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from flott.common.typeinfo import Types
from flott.datastream.connectors.base import Boundedness, CheckpointedSourceReader, Source

__all__ = ["NumberSequenceSource", "normalize_range_splits", "split_range"]


def split_range(start: int, end_exclusive: int, subtask_index: int, parallelism: int) -> tuple[int, int]:
    """The ``[lo, hi)`` slice of ``[start, end_exclusive)`` that subtask ``subtask_index`` owns.

    Slices are contiguous and differ in size by at most one element."""
    if parallelism < 1 or not 0 <= subtask_index < parallelism:
        raise ValueError(f"invalid subtask {subtask_index} of parallelism {parallelism}")
    total = max(0, end_exclusive - start)
    lo = start + total * subtask_index // parallelism
    hi = start + total * (subtask_index + 1) // parallelism
    return lo, hi


def normalize_range_splits(splits: Iterable[Any]) -> list[tuple[int, int]]:
    """``[(next, end_exclusive), ...]`` from restored splits (tuples, or lists after msgpack/JSON).

    Empty ranges are dropped; anything that is not a pair of ints is rejected."""
    out: list[tuple[int, int]] = []
    for split in splits:
        try:
            lo, hi = split
        except (TypeError, ValueError):
            raise ValueError(f"not an index-range split (next, end): {split!r}") from None
        if isinstance(lo, bool) or isinstance(hi, bool) or not isinstance(lo, int) or not isinstance(hi, int):
            raise ValueError(f"not an index-range split (next, end): {split!r}")
        if lo < hi:
            out.append((lo, hi))
    return out


class _RangeSplitsReader:
    """Reader state over index-range splits: the current ``[_next, _hi)`` and the ranges after it.

    Subclasses read ``[_next, _hi)`` in ``poll_batch`` and call :meth:`_advance` once it is
    exhausted, so the per-batch fast path costs exactly what a single range costs."""

    def __init__(self, splits: list[tuple[int, int]]) -> None:
        self._rest = deque(s for s in splits if s[0] < s[1])
        self._next, self._hi = self._rest.popleft() if self._rest else (0, 0)

    def _advance(self) -> bool:
        """Move to the next non-empty split; False when none is left."""
        if not self._rest:
            return False
        self._next, self._hi = self._rest.popleft()
        return True

    def snapshot_state(self, checkpoint_id: int) -> list[tuple[int, int]]:
        """The unfinished splits as ``(next, end_exclusive)``, the current one first."""
        out = [(self._next, self._hi)] if self._next < self._hi else []
        out.extend(self._rest)
        return out

    def close(self) -> None:
        self._next = self._hi
        self._rest.clear()


class _RangeReader(_RangeSplitsReader):
    """Hands out ``list(range(...))`` slices: the cheapest way to produce many ints in Python."""

    def poll_batch(self, max_records: int) -> list[int] | None:
        cur = self._next
        if cur >= self._hi:
            if not self._advance():
                return None
            cur = self._next
        stop = min(cur + max_records, self._hi)
        self._next = stop
        return list(range(cur, stop))


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
        return Types.LONG()

    def create_reader(self, subtask_index: int, parallelism: int) -> CheckpointedSourceReader:
        lo, hi = split_range(self._start, self._end + 1, subtask_index, parallelism)
        return _RangeReader([(lo, hi)])

    def restore_reader(
        self, subtask_index: int, parallelism: int, splits: list[Any]
    ) -> CheckpointedSourceReader:
        """A reader of exactly ``splits`` (``(next, end_exclusive)`` tuples from ``snapshot_state``)."""
        return _RangeReader(normalize_range_splits(splits))

    def __repr__(self) -> str:
        return f"NumberSequenceSource({self._start}, {self._end})"
