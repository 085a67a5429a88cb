"""A subtask's whole life on its own thread (Flink's StreamTask / SourceStreamTask / OneInputStreamTask).

:meth:`StreamTask.invoke` builds the operator chain, opens it, runs the main
loop (read a batch from the source or the input gate, push it through the
chain, hand the result to the record writers), ends the input, flushes,
finishes the output partitions and closes the operators. Returning normally
means FINISHED; raising means FAILED (or CANCELED for
:class:`~flott.errors.TaskCancelledError`).

The loop works a batch at a time and does its bookkeeping (cancel flag,
metrics, buffer timeout, processing-time timers, the mailbox) once per batch,
never per record. A source task sizes its batches to ~10 ms of the chain's work
(:mod:`~flott.runtime.tasks.source_batch_size`), so a checkpoint trigger is taken
between two records when the user's function is slow, as Flink's mailbox does.
Processing-time timers need no timer thread: an input poll never blocks past the
moment the next timer (or the oldest buffered output record) is due, and due timers
fire on this thread between batches. The buffer timeout is kept by this thread
between batches too, and by an output flusher thread while a batch runs (a slow
user function must not hold back what it already emitted; see record_writer.py).

Event time: watermarks and watermark status arrive as in-band events per
channel; a :class:`StatusWatermarkValve` per input folds them into the task's
event time (the minimum over active channels), a second one combines the two
inputs of a two-input task, and the chain fires timers and windows and passes
the watermark on. A source task emits ``Long.MAX_VALUE`` when its bounded
input ends, so every timer and window downstream fires before the end.

Errors: flott's own errors (TaskCancelledError, DataExchangeError, ...) pass
through; anything else came from user code (functions, key selectors,
connectors) and becomes a :class:`~flott.errors.UserCodeError` carrying the
type, message and the traceback starting at the user's frame.
"""

from __future__ import annotations

import logging
import os
import queue
import time
import traceback
from collections.abc import Callable
from time import perf_counter_ns
from typing import Any

import flott.runtime
from flott.configuration import parse_duration_ms
from flott.errors import (
    ConfigurationError,
    FlottError,
    NotYetSupportedError,
    TaskCancelledError,
    UserCodeError,
)
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage
from flott.runtime.execution.environment import (
    CheckpointAbortedMail,
    CheckpointCompleteMail,
    Mail,
    TaskEnvironment,
    TriggerCheckpointMail,
)
from flott.runtime.io.network.api import CheckpointBarrier, EndOfPartition, InputGate
from flott.runtime.io.network.protocol import serialize
from flott.runtime.operators.processing_time import Clock, ProcessingTimeService
from flott.runtime.operators.watermark import Watermark, WatermarkStatus
from flott.runtime.tasks.channel_state_recorder import InputChannelStateRecorder
from flott.runtime.tasks.channel_state_replay import replay_channel_state
from flott.runtime.tasks.checkpoint_barrier_aligner import CheckpointBarrierAligner
from flott.runtime.tasks.operator_chain import OperatorChain
from flott.runtime.tasks.record_writer import RecordWriterDelegate
from flott.runtime.tasks.source_batch_size import SourceBatchSize
from flott.runtime.tasks.subtask_checkpoint_coordinator import SubtaskCheckpointCoordinator
from flott.runtime.tasks.watermark_valve import StatusWatermarkValve

log = logging.getLogger(__name__)

RUNTIME_MODE_KEY = "execution.runtime-mode"
BUFFER_TIMEOUT_KEY = "execution.buffer-timeout"
BUFFER_TIMEOUT_INTERVAL_KEY = "execution.buffer-timeout.interval"
BUFFER_TIMEOUT_ENABLED_KEY = "execution.buffer-timeout.enabled"
BATCH_SIZE_KEY = "taskmanager.network.batch-size"

DEFAULT_BUFFER_TIMEOUT_MS = 100
DEFAULT_BATCH_SIZE = 1024
"""Records per buffer. Per-batch costs (a poll, an emit, serialising one buffer) stop mattering
around a few hundred records; beyond a few thousand only latency and memory grow (bench/chain_micro.py)."""

_IDLE_SOURCE_BACKOFF_S = 0.001
"""A source reader that answers ``[]`` at once is not left to spin the CPU."""

_TWO_INPUT_MAX_WAIT_S = 0.005
"""A two-input task with nothing on either gate blocks on one gate at most this long, then
looks at the other: the gates cannot be waited on together (see ``_run_two_input_loop``)."""

_OUTPUT_WAIT_S = 0.005
"""Unaligned checkpoints: how long a backpressured source waits on its mailbox before it looks
at its output's availability again."""

_MAILBOX_POLL_S = 0.1
"""While checkpointing, an input task blocked on its input looks at its mailbox at least this often
(completion notifications commit sinks)."""

SYNC_SAVEPOINT = "SYNC_SAVEPOINT"
CHECKPOINT = "CHECKPOINT"
CHECKPOINT_INTERVAL_KEY = "execution.checkpointing.interval"
CHECKPOINTING_MODE_KEY = "execution.checkpointing.mode"
UNALIGNED_KEYS = ("execution.checkpointing.unaligned.enabled", "execution.checkpointing.unaligned.forced")

_RUNTIME_DIR = os.path.dirname(os.path.abspath(flott.runtime.__file__)) + os.sep


def buffer_timeout_ms(config: dict[str, str]) -> int:
    """The configured buffer timeout: > 0 ms, 0 (flush per batch) or -1 (only full buffers)."""
    if config.get(BUFFER_TIMEOUT_ENABLED_KEY, "true").strip().lower() == "false":
        return -1
    for key in (BUFFER_TIMEOUT_INTERVAL_KEY, BUFFER_TIMEOUT_KEY):
        if key in config:
            return parse_duration_ms(key, config[key])
    return DEFAULT_BUFFER_TIMEOUT_MS


def batch_size(config: dict[str, str]) -> int:
    raw = config.get(BATCH_SIZE_KEY)
    if raw is None:
        return DEFAULT_BATCH_SIZE
    try:
        value = int(raw)
    except ValueError:
        raise ConfigurationError(
            f"Could not parse value '{raw}' for key '{BATCH_SIZE_KEY}' as an integer"
        ) from None
    if value < 1:
        raise ConfigurationError(f"'{BATCH_SIZE_KEY}' must be >= 1, got {value}")
    return value


def is_streaming(config: dict[str, str]) -> bool:
    """STREAMING (default) or BATCH. AUTOMATIC should be resolved by the client; here it means STREAMING."""
    mode = config.get(RUNTIME_MODE_KEY, "STREAMING").strip().upper()
    if mode in ("STREAMING", "AUTOMATIC"):
        return True
    if mode == "BATCH":
        return False
    raise ConfigurationError(
        f"Could not parse value '{config[RUNTIME_MODE_KEY]}' for key '{RUNTIME_MODE_KEY}' "
        "(expected STREAMING, BATCH or AUTOMATIC)"
    )


def exactly_once(config: dict[str, str]) -> bool:
    """``execution.checkpointing.mode``: EXACTLY_ONCE (aligned barriers, the default) or
    AT_LEAST_ONCE (barriers tracked without blocking channels)."""
    mode = config.get(CHECKPOINTING_MODE_KEY, "EXACTLY_ONCE").strip().upper().replace("-", "_")
    if mode not in ("EXACTLY_ONCE", "AT_LEAST_ONCE"):
        raise ConfigurationError(
            f"Could not parse value '{config[CHECKPOINTING_MODE_KEY]}' for key '{CHECKPOINTING_MODE_KEY}' "
            "(expected EXACTLY_ONCE or AT_LEAST_ONCE)"
        )
    return mode == "EXACTLY_ONCE"


def unaligned_checkpoints(config: dict[str, str]) -> bool:
    """``execution.checkpointing.unaligned.enabled`` (or ``.forced``) in EXACTLY_ONCE mode: as in
    Flink, AT_LEAST_ONCE never aligns, so there unaligned checkpoints do not apply."""
    enabled = any(str(config.get(k, "false")).strip().lower() == "true" for k in UNALIGNED_KEYS)
    return enabled and exactly_once(config)


def periodic_checkpointing(config: dict[str, str]) -> bool:
    """True when the job takes periodic checkpoints (sources then end with a final checkpoint)."""
    raw = config.get(CHECKPOINT_INTERVAL_KEY, "").strip()
    if not raw:
        return False
    return parse_duration_ms(CHECKPOINT_INTERVAL_KEY, raw) > 0


def user_code_error(error: BaseException, task_name: str) -> UserCodeError:
    """Wrap a user exception; its traceback starts at the first frame outside flott's runtime."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_RUNTIME_DIR):
        tb = tb.tb_next
    if tb is not None:
        error = error.with_traceback(tb)
    formatted = "".join(traceback.format_exception(error))
    return UserCodeError(type(error).__name__, str(error), formatted, task_name)


class _ChainValveOutput:
    """The task's event time, as combined by the valves, goes into the chain."""

    __slots__ = ("_chain",)

    def __init__(self, chain: OperatorChain) -> None:
        self._chain = chain

    def emit_watermark(self, timestamp: int) -> None:
        self._chain.process_watermark(timestamp)

    def emit_watermark_status(self, status: WatermarkStatus) -> None:
        self._chain.process_watermark_status(status)


class _InputValveOutput:
    """One input's event time, fed as channel ``index`` of the valve combining both inputs."""

    __slots__ = ("_combined", "_index")

    def __init__(self, combined: StatusWatermarkValve, index: int) -> None:
        self._combined = combined
        self._index = index

    def emit_watermark(self, timestamp: int) -> None:
        self._combined.input_watermark(timestamp, self._index)

    def emit_watermark_status(self, status: WatermarkStatus) -> None:
        self._combined.input_watermark_status(status, self._index)


class _GateChannels:
    """The task's gates as the input channel state recorder addresses them: (gate, channel)."""

    __slots__ = ("_gates",)

    def __init__(self, gates: list[InputGate]) -> None:
        self._gates = gates

    def start_recording(self, channel: tuple[int, int], after_barrier: bool) -> bool:
        return self._gates[channel[0]].start_recording(channel[1], after_barrier)

    def take_recording(self, channel: tuple[int, int]) -> list[bytes]:
        return self._gates[channel[0]].take_recording(channel[1])

    def overtaken(self, channel: tuple[int, int]) -> int:
        return self._gates[channel[0]].overtaken(channel[1])


class StreamTask:
    """Runs one subtask: ``invoke()`` on the task's thread, ``cancel()`` from any thread."""

    def __init__(
        self, env: TaskEnvironment, clock: Clock | None = None, nanos: Callable[[], int] = perf_counter_ns
    ) -> None:
        """``clock``: processing time (ms); ``nanos``: the monotonic clock batches are timed with
        (busy/idle time, the buffer timeout, the source's batch size); both injectable for tests."""
        self._env = env
        self._nanos = nanos
        # Parsed in invoke(), so a bad value fails the task through the one failure path.
        self.streaming = True
        self.batch_size = DEFAULT_BATCH_SIZE
        self.buffer_timeout_ms = DEFAULT_BUFFER_TIMEOUT_MS
        self._chain: OperatorChain | None = None
        self._outputs: RecordWriterDelegate | None = None
        self._checkpointer: SubtaskCheckpointCoordinator | None = None
        self.periodic_checkpointing = False
        self.exactly_once = True
        self._source_exhausted = False
        self._stop_savepoint: CheckpointBarrier | None = None
        """A stop-with-savepoint barrier this task passed on and waits to see completed."""
        self._skip_end_input = False
        """Stopped by a savepoint without drain: operators' end-of-input flushes must not run."""
        self._aligner: CheckpointBarrierAligner | None = None
        self.unaligned = False
        self._recorder: InputChannelStateRecorder | None = None
        """Unaligned checkpoints: the in-flight input of the checkpoint in progress."""
        self._gates: list[InputGate] = []
        self.processing_time_service = (
            ProcessingTimeService(clock) if clock is not None else ProcessingTimeService()
        )

    @property
    def name(self) -> str:
        return self._env.task_name_with_subtasks

    # --- lifecycle --------------------------------------------------------------------------

    def invoke(self) -> None:
        env = self._env
        try:
            self.streaming = is_streaming(env.job_config)
            self.batch_size = batch_size(env.job_config)
            self.buffer_timeout_ms = buffer_timeout_ms(env.job_config)
            if len(env.inputs) > 2:
                raise NotYetSupportedError(
                    f"task '{env.vertex.name}' has {len(env.inputs)} inputs: operators with more than "
                    "two inputs are not supported"
                )
            self._check_cancelled()
            chain = self._chain = OperatorChain.build(
                env,
                streaming=self.streaming,
                batch_size=self.batch_size,
                processing_time_service=self.processing_time_service,
            )
            outputs = self._outputs = RecordWriterDelegate.create(
                env, batch_size=self.batch_size, buffer_timeout_ms=self.buffer_timeout_ms
            )
            chain.set_task_output(outputs.write, outputs.broadcast_event)
            if outputs.has_flusher:
                chain.set_tail_collector(outputs.collect_tail)
            if chain.source is None and not env.inputs:
                raise ConfigurationError(f"task '{env.vertex.name}' has neither a source nor an input")
            if self.streaming and env.checkpoint_responder is not None:
                self.periodic_checkpointing = periodic_checkpointing(env.job_config)
                self.exactly_once = exactly_once(env.job_config)
                self.unaligned = unaligned_checkpoints(env.job_config)
                self._checkpointer = SubtaskCheckpointCoordinator(
                    env,
                    chain.all_operators,
                    outputs.broadcast_event,
                    FsspecCheckpointStorage(),
                    outputs.broadcast_priority_barrier,
                )
                for op in chain.all_operators:
                    enable = getattr(op, "enable_checkpointing", None)
                    if enable is not None:
                        enable(self.periodic_checkpointing)
            chain.open()
            replay_channel_state(env, chain, outputs, sorted(env.inputs, key=lambda g: g.input_index))
            if not self.unaligned:
                # The flusher holds the output lock while an emit blocks on a full channel; an
                # unaligned barrier must never wait for that, and capturing the buffers without the
                # lock would race with a flush in flight. So with unaligned checkpoints buffers
                # are flushed between batches only (execution.buffer-timeout bounds the wait then
                # only between records' batches).
                outputs.start_flusher(self.name)
            if chain.source is not None:
                self._run_source_loop(chain, outputs)
            elif len(env.inputs) == 2:
                self._run_two_input_loop(chain, outputs)
            else:
                self._run_input_loop(chain, outputs)
            self._check_cancelled()
            # Processing time stops here, as in Flink: pending processing-time timers do not fire.
            self.processing_time_service.quiesce()
            if not self._skip_end_input:
                self._end_input(chain, outputs)
            outputs.flush()
            if self._checkpointer is not None:
                self._checkpointer.close(cancel=False)  # the last acknowledgements go out first
            chain.close()
            outputs.finish()
        except BaseException as e:
            translated = self._translate(e)
            self._cleanup_after_failure(
                None
                if isinstance(translated, TaskCancelledError)
                else f"{type(translated).__name__}: {translated}"
            )
            if translated is e:
                raise
            raise translated from e
        finally:
            self._close_inputs()

    def cancel(self) -> None:
        """Stop the task from another thread: set the flag and wake a blocked poll or emit."""
        self._env.cancelled.set()
        self._close_inputs()
        for output in self._env.outputs:
            try:
                output.writer.release()
            except Exception as e:
                log.warning("%s: releasing output on cancel failed: %s", self.name, e)

    # --- main loops -------------------------------------------------------------------------

    def _run_source_loop(self, chain: OperatorChain, outputs: RecordWriterDelegate) -> None:
        source = chain.source
        assert source is not None
        env = self._env
        metrics = env.metrics
        cancelled = env.cancelled.is_set
        poll_batch = source.poll_batch
        process = chain.process
        write = outputs.write
        flush_if_due = outputs.flush_if_due
        # The mailbox is looked at between batches: a batch is kept to ~10 ms of the chain's work,
        # so a checkpoint trigger waits at most for that, or for the one record being processed.
        batch_size = SourceBatchSize(self.batch_size)
        observe = batch_size.observe
        now = self._nanos
        pts = self.processing_time_service
        next_due = pts.next_due
        clock = pts.clock
        mailbox_empty = env.mailbox.empty
        # Unaligned checkpoints: a source does not poll while its output is full (Flink's task
        # waits for output availability and takes mail meanwhile), else a blocked emit would hold
        # the trigger back as long as the consumer takes to free a buffer.
        output_available = outputs.is_available if self.unaligned else None
        while True:
            if cancelled():
                raise TaskCancelledError(f"task {self.name} was cancelled")
            if not mailbox_empty() and self._process_source_mails(chain, outputs):
                return
            if output_available is not None and not output_available():
                if self._process_source_mails(chain, outputs, block_s=_OUTPUT_WAIT_S):
                    return
                continue
            due = next_due()
            if due is not None and clock() >= due:
                self._fire_timers()
            t0 = now()
            batch = poll_batch(batch_size.size)
            t1 = now()
            if batch is None:
                metrics.busy_time_ns += t1 - t0
                source.emit_final_watermark()
                if self.periodic_checkpointing:
                    # Exactly-once to the end: the source finishes only once a checkpoint taken after
                    # its last record (by every source) completed, so sinks can commit everything.
                    self._source_exhausted = True
                    outputs.flush()
                    while not self._process_source_mails(chain, outputs, block_s=_MAILBOX_POLL_S):
                        self._check_cancelled()
                return
            if not batch:
                if t1 - t0 < 500_000:
                    time.sleep(_IDLE_SOURCE_BACKOFF_S)
                flush_if_due(now())
                metrics.idle_time_ns += now() - t0
                continue
            metrics.source_records += len(batch)
            back_pressured_before = metrics.back_pressured_time_ns
            result = process(batch)
            if result:
                write(result)
            t2 = now()
            flush_if_due(t2)
            t3 = now()
            # Per-batch bookkeeping goes here (one batch: poll, chain, write, flush; never per record).
            back_pressured = metrics.back_pressured_time_ns - back_pressured_before
            metrics.busy_time_ns += (t3 - t0) - back_pressured
            # The batch size follows the chain's cost only: a reader that waits for data in its poll
            # (Kafka's fetch) must not be driven to one-record polls.
            observe(len(batch), (t3 - t1) - back_pressured)

    def _run_input_loop(self, chain: OperatorChain, outputs: RecordWriterDelegate) -> None:
        env = self._env
        gate = env.inputs[0].gate
        metrics = env.metrics
        cancelled = env.cancelled.is_set
        poll = gate.poll
        process = chain.process
        write = outputs.write
        flush_if_due = outputs.flush_if_due
        poll_timeout = self._poll_timeout
        now = self._nanos
        valve = StatusWatermarkValve(gate.num_channels, _ChainValveOutput(chain))
        finished = [False] * gate.num_channels
        remaining = gate.num_channels
        aligner = self._make_aligner([gate])
        recorder = self._recorder
        mailbox_empty = env.mailbox.empty
        while remaining:
            if cancelled():
                raise TaskCancelledError(f"task {self.name} was cancelled")
            if not mailbox_empty():
                self._process_input_mails()
            t0 = now()
            item = poll(poll_timeout(t0))
            t1 = now()
            metrics.idle_time_ns += t1 - t0
            if item is None:
                self._fire_due_timers()
                flush_if_due(now())
                continue
            channel, payload = item
            if recorder is not None and recorder.active:
                self._record(0, channel, payload)
            if type(payload) is list or isinstance(payload, list):
                metrics.num_records_in += len(payload)
                metrics.num_buffers_in += 1
                back_pressured_before = metrics.back_pressured_time_ns
                result = process(payload)
                if result:
                    write(result)
                self._fire_due_timers()
                flush_if_due(now())
                t2 = now()
                metrics.busy_time_ns += (t2 - t1) - (metrics.back_pressured_time_ns - back_pressured_before)
            elif type(payload) is Watermark:
                self._timed(valve.input_watermark, payload.timestamp, channel)
            elif type(payload) is WatermarkStatus:
                self._timed(valve.input_watermark_status, payload, channel)
            elif type(payload) is CheckpointBarrier:
                if aligner is not None:
                    aligner.on_barrier(0, channel, payload)
            elif isinstance(payload, EndOfPartition):
                if not finished[channel]:
                    finished[channel] = True
                    remaining -= 1
                    if aligner is not None:
                        aligner.on_end_of_partition(0, channel)

    def _run_two_input_loop(self, chain: OperatorChain, outputs: RecordWriterDelegate) -> None:
        """Both inputs of a two-input head operator (Flink's StreamMultipleInputProcessor).

        The gates cannot be waited on together, so when neither has anything the
        loop blocks on one of them for at most a few ms, alternating: idle cost is
        a few hundred wake-ups a second, added latency at most that wait.
        """
        env = self._env
        gates: list[InputGate] = [group.gate for group in sorted(env.inputs, key=lambda g: g.input_index)]
        metrics = env.metrics
        cancelled = env.cancelled.is_set
        processors = (chain.process, chain.process2)
        write = outputs.write
        flush_if_due = outputs.flush_if_due
        now = self._nanos
        combined = StatusWatermarkValve(2, _ChainValveOutput(chain))
        valves = [
            StatusWatermarkValve(g.num_channels, _InputValveOutput(combined, i)) for i, g in enumerate(gates)
        ]
        finished = [[False] * g.num_channels for g in gates]
        remaining = [g.num_channels for g in gates]
        aligner = self._make_aligner(gates)
        recorder = self._recorder
        mailbox_empty = env.mailbox.empty
        turn = 0
        while remaining[0] or remaining[1]:
            if cancelled():
                raise TaskCancelledError(f"task {self.name} was cancelled")
            if not mailbox_empty():
                self._process_input_mails()
            t0 = now()
            item = None
            index = turn
            for step in range(2):
                index = (turn + step) % 2
                if remaining[index]:
                    item = gates[index].poll(0)
                    if item is not None:
                        break
            if item is None:
                index = turn if remaining[turn] else 1 - turn
                item = gates[index].poll(min(self._poll_timeout(t0), _TWO_INPUT_MAX_WAIT_S))
            turn = 1 - index
            t1 = now()
            metrics.idle_time_ns += t1 - t0
            if item is None:
                self._fire_due_timers()
                flush_if_due(now())
                continue
            channel, payload = item
            if recorder is not None and recorder.active:
                self._record(index, channel, payload)
            if type(payload) is list or isinstance(payload, list):
                metrics.num_records_in += len(payload)
                metrics.num_buffers_in += 1
                back_pressured_before = metrics.back_pressured_time_ns
                result = processors[index](payload)
                if result:
                    write(result)
                self._fire_due_timers()
                flush_if_due(now())
                t2 = now()
                metrics.busy_time_ns += (t2 - t1) - (metrics.back_pressured_time_ns - back_pressured_before)
            elif type(payload) is Watermark:
                self._timed(valves[index].input_watermark, payload.timestamp, channel)
            elif type(payload) is WatermarkStatus:
                self._timed(valves[index].input_watermark_status, payload, channel)
            elif type(payload) is CheckpointBarrier:
                if aligner is not None:
                    aligner.on_barrier(index, channel, payload)
            elif isinstance(payload, EndOfPartition):
                if not finished[index][channel]:
                    finished[index][channel] = True
                    remaining[index] -= 1
                    if aligner is not None:
                        aligner.on_end_of_partition(index, channel)
                    if index == 1 and not remaining[1]:
                        chain.end_input2()

    # --- checkpoints ------------------------------------------------------------------------

    def _make_aligner(self, gates: list[InputGate]) -> CheckpointBarrierAligner | None:
        if self._checkpointer is None:
            return None
        self._gates = gates
        if self.unaligned:
            self._recorder = InputChannelStateRecorder(serialize, _GateChannels(gates))
            self._aligner = CheckpointBarrierAligner(
                gates,
                self._on_aligned,
                self._on_alignment_cancelled,
                unaligned=True,
                on_unaligned_started=self._on_unaligned_started,
                on_channel_barrier=self._on_channel_barrier,
                on_unaligned_done=self._on_unaligned_done,
            )
            return self._aligner
        self._aligner = CheckpointBarrierAligner(
            gates, self._on_aligned, self._on_alignment_cancelled, blocking=self.exactly_once
        )
        return self._aligner

    # Unaligned checkpoints: the handler's callbacks and the recorder's feed (see
    # subtask_checkpoint_coordinator.py). An EndOfPartition or barrier reaches the recorder through
    # the handler; records and watermarks through _record.

    def _record(self, gate_index: int, channel: int, payload: object) -> None:
        recorder = self._recorder
        assert recorder is not None
        if type(payload) is CheckpointBarrier:
            return
        if isinstance(payload, EndOfPartition):
            recorder.on_end_of_partition((gate_index, channel))
        else:
            recorder.on_item((gate_index, channel), payload)
        self._maybe_finish_unaligned()

    def _on_unaligned_started(self, barrier: CheckpointBarrier) -> None:
        assert self._recorder is not None and self._checkpointer is not None
        aligner = self._aligner
        assert aligner is not None
        previous = self._recorder.checkpoint_id
        if previous is not None:
            # Its barriers all came, but not yet the data they overtook: a newer checkpoint means
            # the coordinator gave it up (timed out); it cannot complete any more.
            self._recorder.abort()
            self._checkpointer.abort_unaligned(previous)
        self._recorder.start(barrier.checkpoint_id, aligner.open_channels(), aligner.first_channel)
        self._timed(self._checkpointer.start_unaligned, barrier)

    def _on_channel_barrier(self, gate_index: int, channel: int, barrier: CheckpointBarrier) -> None:
        assert self._recorder is not None
        self._recorder.on_barrier((gate_index, channel), barrier.checkpoint_id)

    def _on_unaligned_done(self, barrier: CheckpointBarrier) -> None:
        assert self._recorder is not None
        self._recorder.barriers_done()
        self._maybe_finish_unaligned()

    def _maybe_finish_unaligned(self) -> None:
        recorder = self._recorder
        if recorder is None or not recorder.complete:
            return
        assert self._checkpointer is not None and recorder.checkpoint_id is not None
        cid = recorder.checkpoint_id
        self._timed(self._checkpointer.finish_unaligned, cid, recorder.finish())

    def _on_aligned(self, barrier: CheckpointBarrier) -> None:
        assert self._checkpointer is not None
        self._timed(self._checkpointer.checkpoint, barrier)
        if barrier.checkpoint_type == SYNC_SAVEPOINT:
            # Flink's synchronous savepoint: nothing moves until the savepoint is known complete
            # (sinks commit on that notification) or failed (the job goes on).
            self._stop_savepoint = barrier
            while self._stop_savepoint is not None:
                self._check_cancelled()
                self._process_input_mails(block_s=_MAILBOX_POLL_S)

    def _on_alignment_cancelled(self, checkpoint_id: int, reason: str) -> None:
        recorder = self._recorder
        if recorder is not None and recorder.checkpoint_id == checkpoint_id:
            recorder.abort()
        if self._checkpointer is not None:
            self._checkpointer.abort_unaligned(checkpoint_id)
        responder = self._env.checkpoint_responder
        if responder is not None:
            responder.decline(checkpoint_id, f"alignment cancelled: {reason}")

    def _next_mail(self, block_s: float) -> Mail | None:
        mailbox = self._env.mailbox
        try:
            return mailbox.get(True, block_s) if block_s > 0 else mailbox.get_nowait()
        except queue.Empty:
            return None

    def _process_input_mails(self, block_s: float = 0.0) -> None:
        """Notifications for a task without a source (triggers only go to sources)."""
        checkpointer = self._checkpointer
        while (mail := self._next_mail(block_s)) is not None:
            block_s = 0.0
            if checkpointer is None:
                continue
            if type(mail) is CheckpointCompleteMail:
                self._on_checkpoint_complete(checkpointer, mail.checkpoint_id)
            elif type(mail) is CheckpointAbortedMail:
                self._on_checkpoint_aborted(checkpointer, mail.checkpoint_id)

    def _on_checkpoint_complete(self, checkpointer: SubtaskCheckpointCoordinator, checkpoint_id: int) -> bool:
        """Operators commit; True if it completes this task's stop-with-savepoint (the task ends)."""
        checkpointer.notify_complete(checkpoint_id)
        stop = self._stop_savepoint
        if stop is None or stop.checkpoint_id != checkpoint_id:
            return False
        self._stop_savepoint = None
        self._skip_end_input = not stop.drain
        return True

    def _on_checkpoint_aborted(self, checkpointer: SubtaskCheckpointCoordinator, checkpoint_id: int) -> None:
        checkpointer.notify_aborted(checkpoint_id)
        if self._aligner is not None:
            self._aligner.abort(checkpoint_id, "checkpoint aborted")
        stop = self._stop_savepoint
        if stop is not None and stop.checkpoint_id == checkpoint_id:
            self._stop_savepoint = None  # the stop failed: the job goes on

    def _process_source_mails(
        self, chain: OperatorChain, outputs: RecordWriterDelegate, block_s: float = 0.0
    ) -> bool:
        """Handle what is in the mailbox (waiting up to ``block_s`` for the first); True: finish now."""
        checkpointer = self._checkpointer
        source = chain.source
        assert source is not None
        while True:
            stopping = self._stop_savepoint is not None
            mail = self._next_mail(_MAILBOX_POLL_S if stopping else block_s)
            if mail is None:
                if stopping:
                    self._check_cancelled()
                    continue  # a stop-with-savepoint holds the source until the savepoint is decided
                return False
            block_s = 0.0
            if checkpointer is None:
                continue
            if type(mail) is TriggerCheckpointMail:
                if mail.drain and not self._source_exhausted:
                    self._timed(source.emit_final_watermark)
                barrier = CheckpointBarrier(
                    mail.checkpoint_id, mail.timestamp, mail.checkpoint_type, mail.location, mail.drain
                )
                if self.unaligned and mail.checkpoint_type == CHECKPOINT:
                    # A source has no input channel state: its checkpoint is whole at once.
                    self._timed(checkpointer.start_unaligned, barrier, self._source_exhausted)
                    self._timed(checkpointer.finish_unaligned, barrier.checkpoint_id, {})
                else:
                    self._timed(checkpointer.checkpoint, barrier, self._source_exhausted)
                if mail.checkpoint_type == SYNC_SAVEPOINT:
                    self._stop_savepoint = barrier
            elif type(mail) is CheckpointCompleteMail:
                if self._on_checkpoint_complete(checkpointer, mail.checkpoint_id):
                    return True
                if mail.final and self._source_exhausted:
                    return True
            elif type(mail) is CheckpointAbortedMail:
                self._on_checkpoint_aborted(checkpointer, mail.checkpoint_id)

    # --- time -------------------------------------------------------------------------------

    def _poll_timeout(self, now_ns: int) -> float:
        """Block on input at most until a buffered output record or a processing-time timer is due."""
        assert self._outputs is not None
        timeout = self._outputs.poll_timeout(now_ns)
        pts = self.processing_time_service
        due = pts.next_due()
        if due is not None:
            timeout = min(timeout, max(due - pts.clock(), 0) / 1000)
        if self._checkpointer is not None:
            timeout = min(timeout, _MAILBOX_POLL_S)
        return timeout

    def _fire_due_timers(self) -> None:
        pts = self.processing_time_service
        due = pts.next_due()
        if due is not None and pts.clock() >= due:
            self._fire_timers()

    def _fire_timers(self) -> None:
        self._timed(self.processing_time_service.fire_due)

    def _timed(self, action: Callable[..., Any], *args: Any) -> None:
        """Run ``action`` (timers, watermark handling: it may emit records) and count it as busy time."""
        metrics = self._env.metrics
        start = perf_counter_ns()
        back_pressured_before = metrics.back_pressured_time_ns
        action(*args)
        metrics.busy_time_ns += (perf_counter_ns() - start) - (
            metrics.back_pressured_time_ns - back_pressured_before
        )

    def _end_input(self, chain: OperatorChain, outputs: RecordWriterDelegate) -> None:
        metrics = self._env.metrics
        start = perf_counter_ns()
        back_pressured_before = metrics.back_pressured_time_ns
        for produced in chain.end_input():
            outputs.write(produced)
        metrics.busy_time_ns += (perf_counter_ns() - start) - (
            metrics.back_pressured_time_ns - back_pressured_before
        )

    # --- failure handling -------------------------------------------------------------------

    def _check_cancelled(self) -> None:
        if self._env.cancelled.is_set():
            raise TaskCancelledError(f"task {self.name} was cancelled")

    def _translate(self, error: BaseException) -> BaseException:
        if self._env.cancelled.is_set() and isinstance(error, Exception):
            # Whatever broke while we were being cancelled is a consequence of the cancel.
            if isinstance(error, TaskCancelledError):
                return error
            return TaskCancelledError(f"task {self.name} was cancelled")
        if isinstance(error, FlottError):
            return error
        if isinstance(error, (Exception, SystemExit)):
            return user_code_error(error, self.name)
        return error

    def _cleanup_after_failure(self, cause: str | None) -> None:
        if self._checkpointer is not None:
            # Before the operators close: a writer may still read a backend's captured view.
            self._checkpointer.close(cancel=True)
        if self._outputs is not None:
            self._outputs.release(cause)
        else:
            for output in self._env.outputs:
                try:
                    output.writer.release(cause)
                except Exception as e:
                    log.warning("%s: releasing output failed: %s", self.name, e)
        if self._chain is not None:
            self._chain.close_quietly()

    def _close_inputs(self) -> None:
        for input_group in self._env.inputs:
            try:
                input_group.gate.close()
            except Exception as e:
                log.warning("%s: closing input gate failed: %s", self.name, e)
