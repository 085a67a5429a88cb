"""Runtime contract of sources and sinks (Flink's Source/SourceReader and Sink/SinkWriter).

A Source or Sink object is built on the client, cloudpickled into the JobGraph
and only unpickled on a TaskExecutor, where the source/sink operator calls
these methods on the task's thread. Keep them cheap per batch: readers hand out
lists of records, writers take lists.
"""

from __future__ import annotations

from enum import Enum
from typing import Protocol, runtime_checkable


class Boundedness(Enum):
    BOUNDED = "BOUNDED"
    CONTINUOUS_UNBOUNDED = "CONTINUOUS_UNBOUNDED"


@runtime_checkable
class SourceReader(Protocol):
    def poll_batch(self, max_records: int) -> list | None:
        """Up to ``max_records`` records; ``[]`` if none are ready now (may block <= ~50 ms);
        ``None`` once the input is exhausted (bounded sources only)."""

    def close(self) -> None: ...


@runtime_checkable
class Source(Protocol):
    def get_boundedness(self) -> Boundedness: ...

    def create_reader(self, subtask_index: int, parallelism: int) -> SourceReader:
        """The reader of subtask ``subtask_index`` of ``parallelism``: each subtask reads a disjoint share."""


@runtime_checkable
class SinkWriter(Protocol):
    def write_batch(self, records: list) -> None: ...

    def flush(self, end_of_input: bool) -> None:
        """Make written records visible (end_of_input: the last call; finalise part files)."""

    def close(self) -> None: ...


@runtime_checkable
class Sink(Protocol):
    def create_writer(self, subtask_index: int, parallelism: int, input_type: object | None) -> SinkWriter:
        """``input_type`` is the declared flott TypeInformation of the records, or None."""
