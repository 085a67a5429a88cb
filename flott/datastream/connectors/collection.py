"""``CollectionSource``: the elements of a Python collection, in order (``env.from_collection``).

The elements travel inside the pickled source. It is non-parallel like Flink's
``fromCollection``: subtask 0 emits everything; should it ever be deployed with
parallelism > 1, the other subtasks emit nothing, so no element is duplicated.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flott.datastream.connectors.base import Boundedness, Source, SourceReader

__all__ = ["CollectionSource"]


class _ListReader:
    def __init__(self, elements: list[Any]) -> None:
        self._elements = elements
        self._pos = 0

    def poll_batch(self, max_records: int) -> list[Any] | None:
        pos = self._pos
        if pos >= len(self._elements):
            return None
        self._pos = pos + max_records
        return self._elements[pos : pos + max_records]

    def close(self) -> None:
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

    def create_reader(self, subtask_index: int, parallelism: int) -> SourceReader:
        return _ListReader(self._elements if subtask_index == 0 else [])

    def __len__(self) -> int:
        return len(self._elements)
