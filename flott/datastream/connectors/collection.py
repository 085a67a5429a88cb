"""``CollectionSource``: the elements of a Python collection, in order (``env.from_collection``).

The elements travel inside the pickled source. It is non-parallel like Flink's
``fromCollection``: subtask 0 emits everything; should it ever be deployed with
parallelism > 1, the other subtasks emit nothing, so no element is duplicated.

Checkpointing: a split is ``(next index, end index)`` into the element list
(exclusive end; the elements themselves stay in the source), like Flink's
``FromElementsSource`` that checkpoints the number of emitted elements.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flott.datastream.connectors.base import Boundedness, CheckpointedSourceReader, Source
from flott.datastream.connectors.number_seq import _RangeSplitsReader, normalize_range_splits

__all__ = ["CollectionSource"]


class _ListReader(_RangeSplitsReader):
    def __init__(self, elements: list[Any], splits: list[tuple[int, int]]) -> None:
        n = len(elements)
        super().__init__([(lo, min(hi, n)) for lo, hi in splits])
        self._elements = elements

    def poll_batch(self, max_records: int) -> list[Any] | None:
        pos = self._next
        if pos >= self._hi:
            if not self._advance():
                return None
            pos = self._next
        stop = min(pos + max_records, self._hi)
        self._next = stop
        return self._elements[pos:stop]

    def close(self) -> None:
        super().close()
        self._elements = []


class CollectionSource(Source):
    """A bounded, non-parallel source of ``elements`` (copied when the source is built)."""

    def __init__(self, elements: Iterable[Any], type_info: Any = None) -> None:
        self._elements = list(elements)
        self._type_info = type_info

    def get_boundedness(self) -> Boundedness:
        return Boundedness.BOUNDED

    def get_produced_type(self) -> Any:
        return self._type_info

    def get_max_parallelism(self) -> int:
        return 1

    def create_reader(self, subtask_index: int, parallelism: int) -> CheckpointedSourceReader:
        return _ListReader(self._elements, [(0, len(self._elements))] if subtask_index == 0 else [])

    def restore_reader(
        self, subtask_index: int, parallelism: int, splits: list[Any]
    ) -> CheckpointedSourceReader:
        """A reader of exactly ``splits`` (``(next index, end index)`` from ``snapshot_state``)."""
        return _ListReader(self._elements, normalize_range_splits(splits))

    def __len__(self) -> int:
        return len(self._elements)
