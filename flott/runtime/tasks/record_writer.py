"""From the chain's output batches to buffers on the wire (Flink's RecordWriter + ChannelSelector).

One :class:`RecordWriter` per output edge: its partitioner spreads a batch
over per-subpartition lists, and a list is emitted as one buffer when it holds
``batch_size`` records, or when the buffer timeout has passed. The task loop
flushes what is due between batches (it polls its input with a timeout and calls
:meth:`RecordWriterDelegate.flush_if_due`); that alone would leave records waiting
as long as a slow user function runs, so with a positive timeout an *output
flusher* thread (Flink's OutputFlusher) also flushes every writer each interval,
whatever the task thread is doing. It also sees the records a slow lazy tail of the
chain (map, flat_map, filter) has yielded so far: the chain builds its output list
with :meth:`RecordWriterDelegate.collect_tail`, which the flusher may take a prefix
of and write. One lock per task serialises the two threads; the task thread takes
it once per batch (write, flush, event), never per record, and order per channel
and relative to watermarks and barriers stays what the task thread wrote.

In-band events (watermarks) are broadcast on every output edge after the
records buffered before them, so an event never overtakes data.

Side outputs: an output edge may carry one OutputTag of the chain's last
operator instead of its main output (the operator's descriptor config maps
edge ids to tag ids, :data:`OUTPUT_TAGS`). Only then is a batch split, in
one pass, into the main records and the ``(tag, value)`` records per tag.

Declared output types: records leave a task here, so this is where PyFlink's Python operators
hand their results to Java encoded with the coder of their declared ``output_type`` (side
outputs: their OutputTag's type). :func:`~flott.common.type_conversion.output_type_check` does
that per batch: a value that does not fit fails the task with PyFlink's error, a value the coder
converts (an int declared FLOAT, a Row's field names) is converted, and a batch that already fits
passes as it is after one generated loop. A task with one hash-partitioned output has that check
generated into the partitioner's loop instead (it visits every record anyway, to take its key).
Undeclared and ``PICKLED_BYTE_ARRAY`` outputs, and the outputs of sources (Java operators in
PyFlink), are not checked at all.

Back-pressured time is the time ``emit`` spent blocked waiting for the
consumer. A writer that measures that itself (a ``back_pressured_time_ns``
counter, as the network's ResultPartition has) is trusted, so serialising a
buffer in ``emit`` counts as busy time; otherwise the whole ``emit`` call counts.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from time import perf_counter_ns
from typing import Any

from flott.api.common.output_tag import OutputTag
from flott.common.type_conversion import (
    OutputTypeMismatch,
    java_serializer_takes_null,
    output_type_check_lazy,
    output_value_fix,
)
from flott.runtime.execution.environment import TaskEnvironment, TaskIOMetrics
from flott.runtime.io.network.api import ResultPartitionWriter
from flott.runtime.io.network.protocol import HEADER_SIZE, serialize
from flott.runtime.io.network.record_codec import typed_encoder
from flott.runtime.operators.declared_output_type import DeclaredOutputType, declared_type_error
from flott.runtime.operators.runtime_context import StreamingRuntimeContext
from flott.runtime.operators.stream_operator import (
    TIMESTAMPED_INPUT,
    TIMESTAMPED_OUTPUT,
    StreamOperator,
    user_method,
)
from flott.runtime.partitioner import CustomPartitionerWrapper, StreamPartitioner, create_partitioner

log = logging.getLogger(__name__)

MAX_POLL_TIMEOUT_S = 0.1
"""Longest an idle task blocks before it looks at the cancel flag again."""

OUTPUT_TAGS = "output_tags"
"""Config key of a vertex's last operator: ``{edge id: OutputTag id}`` for edges carrying a side output."""

UNCHECKED_OUTPUT = "declared_output_unchecked"
"""Config flag of an operator whose results PyFlink does not serialise where they leave flott's task:
its consumer is fused into it in PyFlink (``env.disable_operator_chaining()`` splits flott's tasks,
not PyFlink's fused Python operators), or flott added the operator (a BATCH combiner)."""

CHECK_INPUT = "declared_input_check"
"""Config of an operator whose chained producer's results PyFlink serialises before they reach it
(``{"type": blob id, "producer": name, "keyed": bool}``): a watermark assigner or async I/O after a
Python function, a BATCH combiner after the function feeding key_by."""


def split_side_outputs(
    batch: list[Any], timestamped: bool, tags: dict[str, OutputTag] | None = None
) -> tuple[list[Any], dict[str, list[Any]]]:
    """The main records of ``batch`` and, per OutputTag id, the values sent to that side output
    (``tags``, if given, receives each OutputTag seen, by id)."""
    main: list[Any] = []
    sides: dict[str, list[Any]] = {}
    keep = main.append
    for record in batch:
        value = record[0] if timestamped else record
        if type(value) is tuple and len(value) == 2 and isinstance(value[0], OutputTag):
            side = (value[1], record[1]) if timestamped else value[1]
            tag_id = value[0].tag_id
            bucket = sides.get(tag_id)
            if bucket is None:
                sides[tag_id] = [side]
                if tags is not None:
                    tags[tag_id] = value[0]
            else:
                bucket.append(side)
        else:
            keep(record)
    return main, sides


def check_declared_input(operator: StreamOperator, env: TaskEnvironment, config: dict[str, Any]) -> None:
    """Make ``operator`` check its input against its chained producer's declared output type
    when the JobGraph says PyFlink serialises the records there (:data:`CHECK_INPUT`).

    The check wraps the operator's batch entry point once, at build time, so operators without
    it pay nothing; with it, each record is checked by a generated generator as the operator pulls
    it, while the record is fresh in the cache (a second pass over a materialised batch cost twice
    as much in a BATCH word count). An operator with ``fold_input_check`` (the BATCH reduce, which
    is what a combiner is) may take the check into its own loop instead, saving the generator's
    step per record (about 250 instructions in the BATCH word count)."""
    spec = config.get(CHECK_INPUT)
    if not spec:
        return
    type_info = env.load_user_object(spec["type"])
    producer = spec["producer"]
    task_name = env.task_name_with_subtasks
    keyed = bool(spec.get("keyed", False))

    def error(e: OutputTypeMismatch) -> Exception:
        return declared_type_error(e, producer, type_info, task_name)

    none_allowed = keyed or java_serializer_takes_null(type_info)
    timestamped = bool(config.get(TIMESTAMPED_INPUT, False))
    fold = getattr(operator, "fold_input_check", None)
    if fold is not None:
        fix = output_value_fix(
            type_info, none_allowed=none_allowed, timestamped=timestamped, on_mismatch=error
        )
        if fix is None or fold(type_info, fix):
            return
    checked = output_type_check_lazy(
        type_info, none_allowed=none_allowed, timestamped=timestamped, on_mismatch=error
    )
    if checked is None:
        return
    if operator.lazy:
        transform = operator.transform
        operator.transform = lambda records: transform(checked(records))  # type: ignore[method-assign]
    else:
        process_batch = operator.process_batch
        operator.process_batch = lambda batch: process_batch(checked(batch))  # type: ignore[method-assign,arg-type]


def _use_typed_encoder(
    writers: list[ResultPartitionWriter], type_info: Any, *, none_allowed: bool, timestamped: bool
) -> None:
    """Let the partitions of a checked main output encode its batches by their schema instead of
    pickling them (record_codec.py): every record written to them passed the declared type's
    check, so it is exactly what the schema decodes back. Writers without the hook keep pickle."""
    encode = typed_encoder(type_info, none_allowed=none_allowed, timestamped=timestamped, fallback=serialize)
    if encode is None:
        return
    for writer in writers:
        set_encoder = getattr(writer, "set_record_encoder", None)
        if set_encoder is not None:
            set_encoder(encode)


class RecordWriter:
    """Partitions and buffers the records of one output edge."""

    def __init__(
        self,
        writer: ResultPartitionWriter,
        partitioner: StreamPartitioner,
        batch_size: int,
        metrics: TaskIOMetrics,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch size must be >= 1, got {batch_size}")
        self._writer = writer
        self._partitioner = partitioner
        self._batch_size = batch_size
        self._metrics = metrics
        self.num_channels = writer.num_subpartitions
        partitioner.setup(self.num_channels)
        self._single = partitioner.single_channel
        self._buffers: list[list[Any]] = [[] for _ in range(self.num_channels)]
        self.pending_since_ns: int | None = None
        """When the oldest record still buffered arrived (None: nothing buffered)."""
        self._writer_measures_back_pressure = isinstance(getattr(writer, "back_pressured_time_ns", None), int)

    @property
    def partitioner(self) -> StreamPartitioner:
        return self._partitioner

    def write(self, batch: list[Any]) -> None:
        size = self._batch_size
        buffers = self._buffers
        channel = self._single
        if channel is not None:
            buffer = buffers[channel]
            if not buffer and len(batch) >= size:
                # Pass-through: the chain's output list becomes the buffer, no copy.
                self._emit_full(channel, batch)
            else:
                buffer.extend(batch)
                if len(buffer) >= size:
                    self._emit_full(channel, buffer)
        else:
            self._partitioner.distribute(batch, buffers)
            for ch in range(self.num_channels):
                if len(buffers[ch]) >= size:
                    self._emit_full(ch, buffers[ch])
        if any(buffers):
            if self.pending_since_ns is None:
                self.pending_since_ns = perf_counter_ns()
        else:
            self.pending_since_ns = None

    def _emit_full(self, channel: int, records: list[Any]) -> None:
        """Emit ``records`` (>= batch_size) as buffers of at most ~2x batch_size; keep the remainder."""
        size = self._batch_size
        n = len(records)
        if n < 2 * size:
            self._emit(channel, records)
            self._buffers[channel] = []
            return
        full = n - n % size
        for start in range(0, full, size):
            self._emit(channel, records[start : start + size])
        self._buffers[channel] = records[full:]

    def _emit(self, channel: int, records: list[Any]) -> None:
        metrics = self._metrics
        writer = self._writer
        if self._writer_measures_back_pressure:
            before = writer.back_pressured_time_ns  # type: ignore[attr-defined]
            writer.emit(channel, records)
            metrics.back_pressured_time_ns += writer.back_pressured_time_ns - before  # type: ignore[attr-defined]
        else:
            start = perf_counter_ns()
            writer.emit(channel, records)
            metrics.back_pressured_time_ns += perf_counter_ns() - start
        metrics.num_buffers_out += 1

    def broadcast_event(self, event: object) -> None:
        """Flush what is buffered, then send ``event`` to every consumer subtask."""
        self.flush()
        self._writer.broadcast_event(event)

    def is_available(self) -> bool:
        """False while some consumer channel is full (an emit would block)."""
        available = getattr(self._writer, "is_available", None)
        return True if available is None else bool(available())

    def emit_restored(self, channel: int, records: list[Any]) -> None:
        """A batch of restored output channel state, straight to its subpartition (it was
        partitioned when first written)."""
        self._emit(channel, records)

    def broadcast_priority_barrier(self, barrier: object) -> dict[int, list[bytes]]:
        """Unaligned checkpoint: ``barrier`` goes ahead of everything queued on every consumer
        channel (no credit, no waiting for space); returns this edge's output channel state per
        subpartition: the batches the barrier overtook, then the records still buffered here,
        as payloads. Those are still sent after the barrier as usual (flushing them now could
        block under backpressure, which is what the barrier must not wait for)."""
        encode: Callable[[list], bytes] = getattr(self._writer, "encode_records", serialize)
        overtaken = self._writer.broadcast_priority_event(barrier)
        state: dict[int, list[bytes]] = {}
        for ch, items in enumerate(overtaken):
            payloads = []
            for item in items:
                if type(item) is list:
                    payloads.append(encode(item))
                else:
                    frame = getattr(item, "frame", None)  # serialised for a remote reader
                    if isinstance(frame, bytes):
                        payloads.append(frame[HEADER_SIZE:])
            if self._buffers[ch]:
                payloads.append(encode(list(self._buffers[ch])))
            if payloads:
                state[ch] = payloads
        return state

    def flush(self) -> None:
        """Emit every non-empty buffer now."""
        buffers = self._buffers
        for ch in range(self.num_channels):
            if buffers[ch]:
                records = buffers[ch]
                buffers[ch] = []
                self._emit(ch, records)
        self.pending_since_ns = None

    def finish(self) -> None:
        """Flush, then send EndOfPartition on every subpartition."""
        self.flush()
        self._writer.finish()
        self._partitioner.close()

    def release(self, cause: str | None = None) -> None:
        self._partitioner.close()
        self._buffers = [[] for _ in range(self.num_channels)]
        self.pending_since_ns = None
        self._writer.release(cause)


class RecordWriterDelegate:
    """All output edges of a task, written together (Flink's RecordWriterDelegate).

    ``buffer_timeout_ms``: > 0 flush buffers that waited that long, and run an output
    flusher thread (:meth:`start_flusher`) that flushes everything every interval;
    0 flush after every input batch; < 0 only flush full buffers (and before an event
    and at the end), Flink's ``execution.buffer-timeout.enabled: false``.

    Thread-safety: with a flusher, every method that touches the writers holds ``_lock``;
    the task thread takes it once per call (a batch), the flusher once per interval. Without
    one, :meth:`write` takes no lock (an acquisition costs ~2,500 instructions in CPython 3.11,
    ``bench/flusher_micro.py``).
    """

    def __init__(
        self,
        writers: list[RecordWriter],
        metrics: TaskIOMetrics,
        buffer_timeout_ms: int,
        tags: list[str | None] | None = None,
        timestamped: bool = False,
        declared: DeclaredOutputType | None = None,
        side_type_check: Callable[[OutputTag], DeclaredOutputType | None] | None = None,
    ) -> None:
        self.writers = writers
        self._metrics = metrics
        self._flush_always = buffer_timeout_ms == 0
        self._timeout_ns: int | None = buffer_timeout_ms * 1_000_000 if buffer_timeout_ms > 0 else None
        self._tags = tags if tags is not None and any(t is not None for t in tags) else None
        """Per writer: the OutputTag id it carries (None: main output); None when no writer has one."""
        self._timestamped = timestamped
        self._declared = declared
        """The check of the main output against the last operator's declared output type (None
        also when the one writer's partitioner took it into its own loop)."""
        if declared is not None and self._tags is None and len(writers) == 1:
            partitioner = writers[0].partitioner
            fold = getattr(partitioner, "fold_check", None)
            if fold is not None and partitioner.single_channel is None and declared.fold_into(fold):
                self._declared = None
        self._side_type_check = side_type_check
        self._side_declared: dict[str, DeclaredOutputType | None] = {}
        self._side_tags: dict[str, OutputTag] = {}
        self._lock = threading.Lock()
        self._interval_s = buffer_timeout_ms / 1000 if buffer_timeout_ms > 0 and writers else None
        self._filling: list[Any] | None = None
        """The output list :meth:`collect_tail` is filling right now (None: none)."""
        self._taken = 0
        """How many records of ``_filling`` the flusher already wrote."""
        self._flusher: threading.Thread | None = None
        self._stop_flusher = threading.Event()
        self.flusher_error: BaseException | None = None
        """What failed on the flusher thread; the task thread raises it at its next write or flush."""

    @classmethod
    def create(
        cls,
        env: TaskEnvironment,
        *,
        batch_size: int,
        buffer_timeout_ms: int,
        key_selector_loader: Callable[[str], Any] | None = None,
    ) -> RecordWriterDelegate:
        """One RecordWriter per entry of ``env.outputs``, with the edge's partitioner."""
        load = key_selector_loader or env.load_user_object
        last = env.vertex.operators[-1] if env.vertex.operators else None
        config = last.config if last is not None else {}
        timestamped = bool(config.get(TIMESTAMPED_OUTPUT, False))
        edge_tags: dict[str, str] = dict(config.get(OUTPUT_TAGS, {}))
        writers = []
        tags: list[str | None] = []
        for output in env.outputs:
            descriptor = output.edge.partitioner
            key_selector = None
            if descriptor.key_selector is not None:
                key_selector = load(descriptor.key_selector)
                if descriptor.kind != "custom":  # custom: a Partitioner and key selector bundle
                    key_selector = user_method(
                        key_selector, "get_key", f"key selector of edge {output.edge.id}"
                    )
            partitioner = create_partitioner(
                descriptor,
                subtask_index=env.subtask_index,
                parallelism=env.parallelism,
                # Routing uses the *consumer's* key groups.
                max_parallelism=output.consumer_max_parallelism or env.max_parallelism,
                key_selector=key_selector,
                timestamped=timestamped,
            )
            if isinstance(partitioner, CustomPartitionerWrapper):
                partitioner.open(StreamingRuntimeContext(env, None))
            writers.append(RecordWriter(output.writer, partitioner, batch_size, env.metrics))
            tags.append(edge_tags.get(output.edge.id))
        declared = None
        side_type_check = None
        if last is not None and last.kind != "source" and env.outputs:
            keyed = all(o.edge.partitioner.kind == "hash" for o in env.outputs)
            producer = last.name

            def side_type_check(tag: OutputTag) -> DeclaredOutputType | None:
                return DeclaredOutputType.of(
                    tag.type_info, producer, env.task_name_with_subtasks, keyed=False, timestamped=timestamped
                )

            if last.output_type is not None and not last.config.get(UNCHECKED_OUTPUT):
                declared_type = load(last.output_type)
                declared = DeclaredOutputType.of(
                    declared_type,
                    producer,
                    env.task_name_with_subtasks,
                    keyed=keyed,
                    timestamped=timestamped,
                )
                if declared is not None:
                    _use_typed_encoder(
                        [o.writer for o, tag in zip(env.outputs, tags, strict=True) if tag is None],
                        declared_type,
                        none_allowed=declared.none_allowed,
                        timestamped=timestamped,
                    )
        return cls(writers, env.metrics, buffer_timeout_ms, tags, timestamped, declared, side_type_check)

    @property
    def has_flusher(self) -> bool:
        """True if a positive buffer timeout asks for an output flusher (and there are outputs)."""
        return self._interval_s is not None

    def write(self, batch: list[Any]) -> None:
        if not self.writers:
            return
        if self._interval_s is None:  # no flusher: the task thread is the only writer, no lock
            self._write_batch(batch)
            return
        with self._lock:
            if self.flusher_error is not None:
                self._raise_flusher_error()
            if batch is self._filling:  # collect_tail's list: the flusher may have written a prefix
                self._filling = None
                taken = self._taken
                if taken:
                    self._taken = 0
                    batch = batch[taken:]
                    if not batch:
                        return
            self._write_batch(batch)

    def _write_batch(self, batch: list[Any]) -> None:
        writers = self.writers
        if self._tags is not None:
            self._write_split(batch)
            return
        if self._declared is not None:
            batch = self._declared.apply(batch)
        self._metrics.num_records_out += len(batch)
        for writer in writers:
            writer.write(batch)

    def _write_split(self, batch: list[Any]) -> None:
        assert self._tags is not None
        main, sides = split_side_outputs(batch, self._timestamped, self._side_tags)
        if self._declared is not None and main:
            main = self._declared.apply(main)
        if self._side_type_check is not None:
            for tag_id, values in sides.items():
                if tag_id not in self._side_declared:
                    self._side_declared[tag_id] = self._side_type_check(self._side_tags[tag_id])
                declared = self._side_declared[tag_id]
                if declared is not None:
                    sides[tag_id] = declared.apply(values)
        self._metrics.num_records_out += len(main) + sum(map(len, sides.values()))
        for writer, tag in zip(self.writers, self._tags, strict=True):
            records = main if tag is None else sides.get(tag)
            if records:
                writer.write(records)

    def broadcast_event(self, event: object) -> None:
        """An in-band event (watermark, barrier) to every consumer of every edge, after the buffered
        records: under the lock, so the flusher cannot hold back a record the event would overtake."""
        with self._lock:
            if self.flusher_error is not None:
                self._raise_flusher_error()
            for writer in self.writers:
                writer.broadcast_event(event)

    def is_available(self) -> bool:
        """Every output can take a buffer without blocking (Flink's output availability)."""
        return all(writer.is_available() for writer in self.writers)

    def broadcast_priority_barrier(self, barrier: object) -> dict[tuple[int, int], list[bytes]]:
        """An unaligned checkpoint's barrier ahead of all output; the output channel state per
        ``(writer index, subpartition)`` (see :meth:`RecordWriter.broadcast_priority_barrier`)."""
        state: dict[tuple[int, int], list[bytes]] = {}
        for w, writer in enumerate(self.writers):
            for ch, payloads in writer.broadcast_priority_barrier(barrier).items():
                state[(w, ch)] = payloads
        return state

    def next_flush_deadline_ns(self) -> int | None:
        """When the oldest buffered record is due (None: nothing to flush on a timer)."""
        if self._timeout_ns is None:
            return None
        oldest = None
        for writer in self.writers:
            since = writer.pending_since_ns
            if since is not None and (oldest is None or since < oldest):
                oldest = since
        return None if oldest is None else oldest + self._timeout_ns

    def poll_timeout(self, now_ns: int) -> float:
        """How long the task may block waiting for input before a flush is due (seconds)."""
        deadline = self.next_flush_deadline_ns()
        if deadline is None:
            return MAX_POLL_TIMEOUT_S
        return min(max(deadline - now_ns, 0) / 1e9, MAX_POLL_TIMEOUT_S)

    def flush_if_due(self, now_ns: int) -> None:
        if self.flusher_error is not None:
            self._raise_flusher_error()
        if self._flush_always:
            self.flush()
            return
        timeout = self._timeout_ns
        if timeout is None:
            return
        for writer in self.writers:
            since = writer.pending_since_ns
            if since is not None and now_ns - since >= timeout:
                with self._lock:
                    writer.flush()

    def flush(self) -> None:
        with self._lock:
            if self.flusher_error is not None:
                self._raise_flusher_error()
            for writer in self.writers:
                if writer.pending_since_ns is not None:
                    writer.flush()

    def finish(self) -> None:
        """Stop the flusher, then flush and end every partition (nothing may follow EndOfPartition)."""
        self._join_flusher()
        with self._lock:
            if self.flusher_error is not None:
                self._raise_flusher_error()
            for writer in self.writers:
                writer.finish()

    def release(self, cause: str | None = None) -> None:
        """Drop buffered data and release every partition; errors here must not mask the failure.

        Not under the lock: a flusher blocked in a full subpartition holds it, and releasing the
        partitions is what wakes it (with TaskCancelledError)."""
        self._stop_flusher.set()
        for writer in self.writers:
            try:
                writer.release(cause)
            except Exception as e:
                log.warning("releasing an output partition failed: %s: %s", type(e).__name__, e)
        self._join_flusher(timeout_s=5.0)

    # --- the output flusher -----------------------------------------------------------------

    def collect_tail(self, records: Iterable[Any]) -> list[Any]:
        """The chain's output list for a batch whose last operators are lazy (instead of ``list``).

        The records are appended to a list the flusher can see (``_filling``) while the lazy
        operators yield them; the flusher only copies a prefix out of it and notes how many it
        wrote (``list.extend`` keeps the list consistent between two records, so no lock is taken
        per record). :meth:`write`, under the lock, cuts that prefix off when the list comes back
        to be written, and stops the flusher looking at it. Every non-empty list returned here is
        written (the chain's last stage always goes to the task's output), so what is left in
        ``_filling`` on entry is an empty list nobody took from, or the list of an outer call
        still filling: that one stays watched and this (nested) one is a plain list."""
        if self._filling:
            return list(records)
        out: list[Any] = []
        self._filling = out
        try:
            out.extend(records)
        except BaseException:
            with self._lock:
                self._filling = None
                self._taken = 0
            raise
        return out

    def start_flusher(self, task_name: str) -> None:
        """Start the output flusher thread (only with a positive buffer timeout)."""
        if self._interval_s is None or self._flusher is not None:
            return
        self._flusher = threading.Thread(
            target=self._run_flusher, name=f"OutputFlusher for {task_name}", daemon=True
        )
        self._flusher.start()

    def _run_flusher(self) -> None:
        interval = self._interval_s
        assert interval is not None
        stop = self._stop_flusher
        while not stop.wait(interval):
            try:
                self._flush_on_timer()
            except BaseException as e:
                if not stop.is_set():
                    self.flusher_error = e
                return

    def _flush_on_timer(self) -> None:
        """Write what a slow lazy tail yielded so far, then flush every non-empty buffer."""
        with self._lock:
            filling = self._filling
            if filling is not None:
                n = len(filling)
                if n > self._taken:
                    part = filling[self._taken : n]
                    self._taken = n
                    self._write_batch(part)
            for writer in self.writers:
                if writer.pending_since_ns is not None:
                    writer.flush()

    def _join_flusher(self, timeout_s: float | None = None) -> None:
        self._stop_flusher.set()
        flusher = self._flusher
        if flusher is not None and flusher is not threading.current_thread():
            flusher.join(timeout_s)
            if flusher.is_alive():
                log.warning("%s did not stop within %s s", flusher.name, timeout_s)

    def _raise_flusher_error(self) -> None:
        error = self.flusher_error
        assert error is not None
        raise error
