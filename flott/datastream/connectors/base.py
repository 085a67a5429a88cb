"""Runtime contract of sources and sinks (Flink's Source/SourceReader and Sink/SinkWriter).

A Source or Sink object is built on the client, cloudpickled into the JobGraph
and only unpickled on a TaskExecutor, where the source/sink operator calls
these methods on the task's thread. Keep them cheap per batch: readers hand out
lists of records, writers take lists.

Optional methods the runtime may look for (use :func:`get_produced_type` and
:func:`get_source_max_parallelism` rather than calling them directly):

* ``Source.get_produced_type() -> TypeInformation | None``: the type of the
  records (``Types.LONG()`` for NumberSequenceSource, ``Types.STRING()`` for
  text files), used when ``from_source`` gets no ``type_info``;
* ``Source.get_max_parallelism() -> int | None``: 1 for non-parallel sources
  (collections, non-parallel SourceFunctions);
* ``SinkWriter.on_checkpoint(checkpoint_id: int) -> None``: a checkpoint is being
  taken (file sinks roll part files per their rolling policy).
"""

from __future__ import annotations

from enum import Enum
from typing import Protocol, runtime_checkable


class DeliveryGuarantee(Enum):
    """What a sink promises about duplicates after failures (PyFlink's ``DeliveryGuarantee``)."""

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1
    NONE = 2


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


def get_produced_type(source: object) -> object | None:
    """The source's declared record type, or None if it does not declare one."""
    getter = getattr(source, "get_produced_type", None)
    return getter() if callable(getter) else None


def get_source_max_parallelism(source: object) -> int | None:
    """1 for sources that must run non-parallel, None when any parallelism works."""
    getter = getattr(source, "get_max_parallelism", None)
    return getter() if callable(getter) else None
