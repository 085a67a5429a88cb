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
* ``SinkWriter.bind_task(env: TaskEnvironment, operator_id: str) -> None``: called
  right after ``create_writer`` with the task's environment, for writers the client
  talks to while the job runs (the collect sink registers its coordination handler).
* ``SinkWriter.set_restored_checkpoint_id(checkpoint_id: int) -> None``: called right after
  ``create_writer`` when the job restores, with the id of the snapshot it restores from (the
  Kafka writer derives the transactional ids its crashed predecessor had open from it).
* ``SourceReader.notify_checkpoint_complete(checkpoint_id: int) -> None``: a checkpoint the
  reader snapshotted for completed (the Kafka source commits offsets to its group).
* ``SinkWriter.on_checkpoint(checkpoint_id: int) -> None``: a checkpoint is being
  taken (file sinks roll part files per their rolling policy). Not needed for a
  writer that takes part in two-phase commit (below): ``prepare_commit`` rolls.

Checkpointing SPI (all optional, duck-typed; see :class:`CheckpointedSourceReader`,
:class:`RestorableSource`, :class:`TwoPhaseCommittingSinkWriter`,
:class:`TwoPhaseCommittingSink` and the helpers at the end of this module).

Sources, Flink's split model. A *split* is a small, plain, picklable value
(tuples of str/int/None; readers also accept lists in place of tuples) that is
self-contained: with the Source object it fully describes what remains to be
read of that split.

* ``SourceReader.snapshot_state(checkpoint_id: int) -> list[Any]``: called on the
  task thread between two ``poll_batch`` calls when a barrier is injected. Returns
  the reader's unfinished splits at their current positions (finished splits may
  be left out, so the list may be empty). Records returned by ``poll_batch``
  before the call are before the checkpoint; every record after it is in the
  returned splits: restoring them loses and duplicates nothing. The reader keeps
  reading normally afterwards.
* ``Source.restore_reader(subtask_index: int, parallelism: int, splits: list[Any])
  -> SourceReader``: a reader of exactly ``splits`` from their positions, used
  instead of ``create_reader`` when the job restores. ``splits`` is this
  subtask's share of the splits of *all* old subtasks, pooled in subtask order
  (SPLIT_DISTRIBUTE: contiguous shares, so a rescale works); it may be empty,
  and then the reader's first ``poll_batch`` returns None (bounded sources).
  Splits are read in the order given.
* A reader without ``snapshot_state`` cannot checkpoint its position: the
  runtime logs a warning and, on restore, uses ``create_reader`` (the source
  re-reads from its start). A source that has ``restore_reader`` but whose
  reader of the current mode cannot snapshot (``FileSource`` monitoring paths
  continuously) falls back to ``create_reader`` inside ``restore_reader``.

Implemented by NumberSequenceSource (``(next, end_exclusive)``),
DataGeneratorSource (``(next index, end index)``), CollectionSource (the same,
indices into its elements) and FileSource with a static file set
(``(path, start, end, skip)``: see :mod:`.file_source`).

Sinks, Flink's two-phase-commit Sink V2:

* ``SinkWriter.set_transactional(enabled: bool = True) -> None``: the runtime
  calls it right after ``create_writer``, before the first ``write_batch``, when
  checkpointing is enabled. Transactional writers make nothing visible by
  themselves until end of input (a FileSink's rolled part files stay hidden,
  pending). ``create_writer`` is unchanged, so other sinks are not affected.
* ``SinkWriter.prepare_commit(checkpoint_id: int) -> list[Any]``: a barrier
  reached the sink, after every record before it was written. Makes everything
  written so far durable and returns plain picklable *committables* which, once
  committed, make exactly those records visible (and nothing written after the
  call). The runtime stores them in the checkpoint (operator state of the sink
  subtask).
* ``Sink.commit(committables: list[Any]) -> None``: make them visible. Must be
  idempotent: the runtime calls it on a TaskExecutor when the checkpoint is
  complete, and again with the committables of the restored checkpoint after a
  failure/restore (before the restored writers write). Committables of a
  checkpoint that was aborted are not lost: the runtime keeps them and commits
  them with the next checkpoint that completes (they hold records before that
  checkpoint too), so it should put every not-yet-committed committable into
  each checkpoint's state, as Flink's committer does.
* ``SinkWriter.notify_checkpoint_complete(checkpoint_id: int) -> None``
  (optional): the committables of checkpoints <= ``checkpoint_id`` are committed;
  lets the writer forget them.
* ``flush(end_of_input=True)`` still finalises and commits everything the writer
  wrote, including committables it handed out (commit being idempotent, the
  runtime's later commit of them is harmless). ``close()`` without end of input
  (cancel, failure) leaves uncommitted data invisible.

Implemented by FileSink (and StreamingFileSink): committables are
``(in-progress path, final path)`` pairs; see :mod:`.file_sink`.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Protocol, runtime_checkable

from flott.api.connector import Boundedness


class DeliveryGuarantee(Enum):
    """What a sink promises about duplicates after failures (PyFlink's ``DeliveryGuarantee``)."""

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1
    NONE = 2


@runtime_checkable
class SourceReader(Protocol):
    def poll_batch(self, max_records: int) -> list | None:
        """Up to ``max_records`` records; ``[]`` if none are ready now (may block <= ~50 ms);
        ``None`` once the input is exhausted (bounded sources only). The task sizes
        ``max_records`` so a batch's work stays near 10 ms (a checkpoint trigger waits for the
        batch in hand); a reader whose records must travel together may return more, and the
        task takes them whole."""

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


@runtime_checkable
class CheckpointedSourceReader(SourceReader, Protocol):
    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        """The unfinished splits with their positions (see module docstring)."""


@runtime_checkable
class RestorableSource(Source, Protocol):
    def restore_reader(self, subtask_index: int, parallelism: int, splits: list[Any]) -> SourceReader:
        """A reader of exactly ``splits``, from their positions (see module docstring)."""


@runtime_checkable
class TwoPhaseCommittingSinkWriter(SinkWriter, Protocol):
    def set_transactional(self, enabled: bool = True) -> None:
        """Checkpointing is on; call before the first ``write_batch``."""

    def prepare_commit(self, checkpoint_id: int) -> list[Any]:
        """Make what was written durable; the committables that reveal exactly it."""


@runtime_checkable
class TwoPhaseCommittingSink(Sink, Protocol):
    def commit(self, committables: list[Any]) -> None:
        """Make ``committables`` visible; idempotent."""


def snapshot_reader_state(reader: object, checkpoint_id: int) -> list[Any] | None:
    """``reader.snapshot_state(checkpoint_id)``, or None if the reader cannot snapshot."""
    snapshot = getattr(reader, "snapshot_state", None)
    return list(snapshot(checkpoint_id)) if callable(snapshot) else None


def restore_source_reader(
    source: object, subtask_index: int, parallelism: int, splits: list[Any] | None
) -> SourceReader:
    """The reader of a restored subtask: ``restore_reader`` with ``splits``, or ``create_reader``
    (from the start) when there is no split state (None) or the source cannot restore."""
    restore = getattr(source, "restore_reader", None)
    if splits is not None and callable(restore):
        return restore(subtask_index, parallelism, splits)  # type: ignore[no-any-return]
    return source.create_reader(subtask_index, parallelism)  # type: ignore[attr-defined,no-any-return]


def is_two_phase_commit(sink: object, writer: object) -> bool:
    """Whether ``sink``/``writer`` take part in two-phase commit (``commit`` + ``prepare_commit``)."""
    return callable(getattr(sink, "commit", None)) and callable(getattr(writer, "prepare_commit", None))


def split_share(splits: list[Any], subtask_index: int, parallelism: int) -> list[Any]:
    """Contiguous share ``subtask_index`` of ``parallelism`` of the pooled ``splits`` (the first
    shares one larger), as the runtime's SPLIT_DISTRIBUTE restore assigns them."""
    if parallelism < 1 or not 0 <= subtask_index < parallelism:
        raise ValueError(f"invalid subtask {subtask_index} of parallelism {parallelism}")
    base, extra = divmod(len(splits), parallelism)
    start = subtask_index * base + min(subtask_index, extra)
    return splits[start : start + base + (1 if subtask_index < extra else 0)]


def get_produced_type(source: object) -> object | None:
    """The source's declared record type, or None if it does not declare one."""
    getter = getattr(source, "get_produced_type", None)
    return getter() if callable(getter) else None


def get_source_max_parallelism(source: object) -> int | None:
    """1 for sources that must run non-parallel, None when any parallelism works."""
    getter = getattr(source, "get_max_parallelism", None)
    return getter() if callable(getter) else None
