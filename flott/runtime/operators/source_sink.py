"""The ends of a chain: reading a Source and writing a Sink (Flink's SourceOperator, SinkWriterOperator).

Connectors speak in batches (``SourceReader.poll_batch``,
``SinkWriter.write_batch``), so neither end adds per-record work.

Checkpoints: a source operator keeps its reader's splits (with positions) as operator list
state, redistributed over the new subtasks on restore, so a restored job reads each record
exactly once more. A sink whose writer can prepare commits (two-phase, e.g. FileSink) becomes
transactional when the job checkpoints periodically: what it wrote up to a checkpoint becomes
visible only once that checkpoint completed; committables of pending checkpoints are in the
operator's state and committed again (idempotently) on restore.

Event time starts at a source given a WatermarkStrategy with a timestamp
assigner (``from_source(source, strategy, name)``): the source operator pairs
records with timestamps and generates watermarks per subtask. A sink on an
event-time path drops the timestamps before handing records to the writer.

Declared types at a sink: every PyFlink sink is a Java operator, so a Python operator chained to
one hands it its records encoded with their declared type, as across a network edge (see
:mod:`flott.runtime.tasks.record_writer`); a chained sink checks (and converts) its input the same
way. ``print()`` is the exception PyFlink makes: it formats Row streams in Python (a record that is
not a Row fails its assertion) and undeclared streams with ``str``. A sink at the head of its task
gets records that were checked where they left the task before.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from operator import itemgetter
from typing import Any

from flott.common.type_conversion import java_serializer_takes_null
from flott.common.typeinfo import RowTypeInfo
from flott.common.types import Row
from flott.errors import InvalidJobGraphError, UserCodeError
from flott.runtime.checkpoint.metadata import SPLIT_DISTRIBUTE, UNION
from flott.runtime.operators.declared_output_type import DeclaredOutputType
from flott.runtime.operators.specs import SourceWithWatermarks
from flott.runtime.operators.stream_operator import DeferredOutput, OperatorSetup, StreamOperator
from flott.runtime.operators.timestamps_watermarks import (
    TimestampsAndWatermarks,
    auto_watermark_interval_ms,
)

_value = itemgetter(0)
_timestamp = itemgetter(1)
log = logging.getLogger(__name__)

SOURCE_SPLITS_STATE = "source-splits"
SOURCE_UNION_SPLITS_STATE = "source-splits-union"
"""Splits of readers with ``union_split_state = True`` (Kafka): every restored subtask gets all of
them and keeps its own, as Flink's split enumerator knows every split (partition discovery needs it)."""
SINK_COMMITTABLES_STATE = "sink-committables"


class SourceOperator(StreamOperator):
    """Head of a source task: owns this subtask's SourceReader (and its watermark generation)."""

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._setup = setup
        loaded = setup.load(setup.descriptor.function, "Source")
        strategy = None
        if isinstance(loaded, SourceWithWatermarks):
            loaded, strategy = loaded.source, loaded.watermark_strategy
        self._source = loaded
        if not callable(getattr(self._source, "create_reader", None)):
            raise InvalidJobGraphError(
                f"source '{self.name}': {type(self._source).__name__} has no "
                "create_reader(subtask, parallelism)"
            )
        self.reader: Any = None
        self._split_watermarks: Any = None
        self.transforms_records = setup.timestamped_output
        """True: records leave as ``(value, timestamp)`` pairs (process_batch is a chain stage)."""
        self._record_timestamps = self.transforms_records and (
            getattr(self._source, "supplies_record_timestamps", False) is True
        )
        """The reader hands out ``(value, record timestamp)`` pairs (Kafka's), the assigner sees them."""
        self.timestamps = TimestampsAndWatermarks(
            strategy,
            DeferredOutput(self),
            setup.processing_time_service,
            auto_watermark_interval_ms(setup.env.job_config),
            timestamped_input=self._record_timestamps,
        )

    def open(self) -> None:
        env = self._setup.env
        restore_reader = getattr(self._source, "restore_reader", None)
        if self._setup.restore is not None and restore_reader is not None:
            splits = self._setup.restored_operator_state(SOURCE_SPLITS_STATE)
            splits += self._setup.restored_union_state(SOURCE_UNION_SPLITS_STATE)
            self.reader = restore_reader(env.subtask_index, env.parallelism, splits)
        else:
            if env.restore is not None and self._setup.restore is None:
                log.warning(
                    "source '%s' has no state in the snapshot the job restores from: it reads from the start",
                    self.name,
                )
            self.reader = self._source.create_reader(env.subtask_index, env.parallelism)
        if self._record_timestamps:
            self.reader.set_emit_timestamps(True)
        if self.transforms_records and callable(getattr(self.reader, "batch_split_keys", None)):
            self._split_watermarks = self.timestamps.use_split_watermarks()
            if self._split_watermarks is not None:
                self._split_watermarks.retain(self.reader.active_split_keys())
        self.timestamps.open(self._setup.runtime_context(None))

    def snapshot_operator_state(self, checkpoint_id: int) -> dict[str, tuple[str, list[Any]]] | None:
        """The reader's splits and positions (None: the reader cannot resume; it re-reads on restore)."""
        snapshot = getattr(self.reader, "snapshot_state", None)
        if snapshot is None:
            return None
        if getattr(self.reader, "union_split_state", False) is True:
            return {SOURCE_UNION_SPLITS_STATE: (UNION, list(snapshot(checkpoint_id)))}
        return {SOURCE_SPLITS_STATE: (SPLIT_DISTRIBUTE, list(snapshot(checkpoint_id)))}

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Tell a reader that wants to know (the Kafka source commits offsets to its group)."""
        notify = getattr(self.reader, "notify_checkpoint_complete", None)
        if notify is not None:
            notify(checkpoint_id)

    def emit_final_watermark(self) -> None:
        """The bounded input ended: ``Long.MAX_VALUE`` so every timer and window downstream fires."""
        self.timestamps.emit_final_watermark()

    def poll_batch(self, max_records: int) -> list[Any] | None:
        """Up to ``max_records`` records, ``[]`` if none are ready, ``None`` when the source is exhausted."""
        return self.reader.poll_batch(max_records)

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        if self.transforms_records:
            out = self.timestamps.assign(batch)
            split_watermarks = self._split_watermarks
            if split_watermarks is not None:  # readers of several splits (Kafka partitions)
                split_watermarks.retain(self.reader.active_split_keys())
                split_watermarks.observe(self.reader.batch_split_keys(), map(_timestamp, out))
            return out
        return batch if type(batch) is list else list(batch)

    def close(self) -> None:
        self.timestamps.close()
        reader, self.reader = self.reader, None
        if reader is not None:
            reader.close()


class SinkWriterOperator(StreamOperator):
    """Tail of a chain: hands each batch to this subtask's SinkWriter; emits nothing downstream."""

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._setup = setup
        self._sink = setup.load(setup.descriptor.function, "Sink")
        if not callable(getattr(self._sink, "create_writer", None)):
            raise InvalidJobGraphError(
                f"sink '{self.name}': {type(self._sink).__name__} has no "
                "create_writer(subtask, parallelism, input_type)"
            )
        self._input_type = setup.load_optional(setup.descriptor.input_type)
        self._declared = self._input_check(setup)
        self.writer: Any = None
        self._strip_timestamps = setup.timestamped_input
        self._transactional = False
        self._pending: dict[int, list[Any]] = {}
        """Committables per checkpoint id, prepared but not yet known to be complete."""

    def _input_check(self, setup: OperatorSetup) -> Any:
        """What this sink checks its input with (None: nothing, see the module docstring)."""
        ids = [o.operator_id for o in setup.env.vertex.operators]
        here = ids.index(setup.descriptor.operator_id) if setup.descriptor.operator_id in ids else 0
        if self._input_type is None or here == 0:
            return None  # a task's head: its input was checked where it left the producing task
        before = setup.env.vertex.operators[here - 1]
        if before.kind == "source":
            return None  # sources are Java operators in PyFlink: nothing Python to check
        producer = before.name
        task = setup.env.task_name_with_subtasks
        if getattr(self._sink, "formats_in_python", False):  # PrintSink
            if isinstance(self._input_type, RowTypeInfo):
                return _RowsForPrint(producer, task)
            return DeclaredOutputType.of(
                self._input_type, producer, task, keyed=False, timestamped=False, none_allowed=False
            )
        return DeclaredOutputType.of(
            self._input_type,
            producer,
            task,
            keyed=False,
            timestamped=False,
            none_allowed=java_serializer_takes_null(self._input_type),
        )

    def enable_checkpointing(self, periodic: bool) -> None:
        """Called before :meth:`open` in a checkpointing task: two-phase sinks become transactional."""
        self._transactional = periodic and callable(getattr(self._sink, "commit", None))

    def open(self) -> None:
        env = self._setup.env
        if self._setup.restore is not None and callable(getattr(self._sink, "commit", None)):
            # Committables of a completed checkpoint that may not have been committed before the failure.
            recovered = self._setup.restored_operator_state(SINK_COMMITTABLES_STATE)
            if recovered:
                self._sink.commit(recovered)
        self.writer = self._sink.create_writer(env.subtask_index, env.parallelism, self._input_type)
        set_restored = getattr(self.writer, "set_restored_checkpoint_id", None)
        if env.restore is not None and callable(set_restored):  # names the crashed writer's transactions
            set_restored(env.restore.checkpoint_id)
        bind_task = getattr(self.writer, "bind_task", None)
        if callable(bind_task):  # writers the client talks to (collect sink) register with the task
            bind_task(env, self._setup.descriptor.operator_id)
        if self._transactional:
            set_transactional = getattr(self.writer, "set_transactional", None)
            if set_transactional is not None:
                set_transactional(True)
            elif not callable(getattr(self.writer, "prepare_commit", None)):
                self._transactional = False

    def snapshot_operator_state(self, checkpoint_id: int) -> dict[str, tuple[str, list[Any]]] | None:
        if not self._transactional:
            flush = getattr(self.writer, "flush", None)
            if flush is not None:
                flush(False)  # at least once: what was written before the barrier is out
            return None
        self._pending[checkpoint_id] = list(self.writer.prepare_commit(checkpoint_id))
        everything = [c for cid in sorted(self._pending) for c in self._pending[cid]]
        return {SINK_COMMITTABLES_STATE: (SPLIT_DISTRIBUTE, everything)}

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Commit what was prepared up to this checkpoint (older aborted ones included)."""
        done = [cid for cid in self._pending if cid <= checkpoint_id]
        if not done:
            return
        committables = [c for cid in sorted(done) for c in self._pending[cid]]
        if committables:
            self._sink.commit(committables)
        for cid in done:
            del self._pending[cid]

    def _commit_all_pending(self) -> None:
        if self._pending:
            self.notify_checkpoint_complete(max(self._pending))

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        if self._strip_timestamps:
            records = list(map(_value, batch))
        else:
            records = batch if type(batch) is list else list(batch)
        if self._declared is not None:
            records = self._declared.apply(records)
        self.writer.write_batch(records)
        return []

    def end_input(self) -> list[Any]:
        # Sources end only after a checkpoint covering all their records completed, so what is
        # prepared is committed already or about to be: commit it (idempotent), then the rest.
        self._commit_all_pending()
        self.writer.flush(True)
        return []

    def close(self) -> None:
        writer, self.writer = self.writer, None
        if writer is not None:
            writer.close()


class _RowsForPrint:
    """PyFlink's ``print()`` of a Row stream formats each record in Python, asserting it is a Row."""

    __slots__ = ("_producer", "_task_name")

    def __init__(self, producer: str, task_name: str) -> None:
        self._producer = producer
        self._task_name = task_name

    def apply(self, batch: list[Any]) -> list[Any]:
        for v in batch:
            if not isinstance(v, Row):
                message = f"print() of a Row stream: '{self._producer}' emitted {v!r}, which is not a Row"
                raise UserCodeError("AssertionError", message, "", self._task_name)
        return batch
