"""A task's part in a checkpoint (Flink's SubtaskCheckpointCoordinator): capture, forward, write, acknowledge.

On the task's thread, when a source is asked to inject barrier *n* or an input task has
aligned on it, the **synchronous part**:

1. every operator of the chain captures its state: ``snapshot_operator_state`` (transactional
   sinks pre-commit here, sources take their positions), and a keyed operator's backend gives a
   view later records cannot change (:func:`~flott.runtime.checkpoint.snapshot.capture_keyed_backend`:
   the heap backend's entries copied, RocksDB's native checkpoint of hard-linked table files);
2. the barrier is broadcast on every output, after every record emitted before it;
3. the task goes back to its records.

The **asynchronous part** (:class:`~flott.runtime.tasks.async_checkpoint_runner.AsyncCheckpointRunner`,
one worker per task) writes the captured state into the checkpoint's directory (keyed state one
file per operator and subtask holding a blob per key group, operator list state one file per
subtask) and then sends the JobMaster the
acknowledgement with the handles, or a decline if writing failed. An aborted checkpoint stops
its writer, which deletes what it wrote.

A capture that fails **fails the task** (the exception leaves :meth:`checkpoint`, the barrier is
not forwarded, the job restarts from its last completed checkpoint as its restart strategy says;
the pending checkpoint is aborted when the job stops running, without counting as a failed one).
That is what Flink does: ``SubtaskCheckpointCoordinatorImpl.checkpointState`` runs the operators'
``prepareSnapshotPreBarrier`` (where ``SinkWriterOperator`` flushes its writer and takes the
committables from ``prepareCommit``) and the synchronous part of ``snapshotState`` and rethrows
what they throw; ``StreamTask.triggerCheckpointOnBarrier`` (tasks with inputs) wraps it in an
``IOException`` "Could not perform checkpoint ..." and ``triggerCheckpointAsyncInMailbox``
(sources) in an ``Exception``, both thrown out of the task's mailbox, which fails the task. The
documentation of ``execution.checkpointing.tolerable-failed-checkpoints`` says the same: it counts
failures of the asynchronous part, of the JobManager's I/O and expired checkpoints; failures of
the synchronous part on a TaskManager always fail the task over. Only the asynchronous part
(writing what was captured) declines, below. Declining instead would be wrong for a
two-phase-commit sink: a sink whose pre-commit failed (a Kafka record not delivered) keeps its
transaction, and the next barrier would pre-commit it without the lost records.

**Unaligned checkpoints** (:meth:`start_unaligned` / :meth:`finish_unaligned`): the synchronous
part runs on the checkpoint's *first* barrier; the barrier goes ahead of everything queued on
every output (``broadcast_priority``), and what it overtook there is the output channel state.
The task then records its input channels' in-flight data until their barriers came
(:class:`~flott.runtime.tasks.channel_state_recorder.InputChannelStateRecorder`) and hands it to
:meth:`finish_unaligned`, which submits the asynchronous part: operator state as above plus one
channel state file (flott.runtime.checkpoint.channel_state), its handle on the chain's head
operator.

Completion and abort notifications reach the operators through :meth:`notify_complete` and
:meth:`notify_aborted` (transactional sinks commit on completion, which the coordinator only
announces once every task's asynchronous part acknowledged).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import msgspec

from flott.runtime.checkpoint import channel_state as channel_state_files
from flott.runtime.checkpoint import snapshot as snapshot_files
from flott.runtime.checkpoint.coordinator import CHECKPOINT
from flott.runtime.checkpoint.incremental import (
    IncrementalCapture,
    IncrementalSnapshotter,
    incremental_enabled,
)
from flott.runtime.checkpoint.metadata import (
    ChannelStateHandle,
    OperatorStateHandle,
    OperatorSubtaskState,
    TaskStateSnapshot,
)
from flott.runtime.checkpoint.storage import CheckpointStorage, join
from flott.runtime.execution.environment import TaskEnvironment
from flott.runtime.io.network.api import CheckpointBarrier
from flott.runtime.operators.stream_operator import StreamOperator
from flott.runtime.tasks.async_checkpoint_runner import AsyncCheckpointRunner, AsyncSnapshotPart

log = logging.getLogger(__name__)

MAX_CONCURRENT_KEY = "execution.checkpointing.max-concurrent-checkpoints"


def max_in_flight(config: dict[str, str]) -> int:
    """Asynchronous parts a task keeps in flight: the coordinator's concurrent checkpoints, plus
    one for a savepoint (savepoints do not count toward that limit)."""
    try:
        return max(1, int(str(config.get(MAX_CONCURRENT_KEY, "1")).strip())) + 1
    except ValueError:
        return 2  # the coordinator refuses the value when the job is planned


class _Capture:
    """One operator's synchronous capture: keyed (written later) or operator state (bytes)."""

    def __init__(
        self,
        keyed: snapshot_files.KeyedStateCapture | IncrementalCapture | None,
        operator_state: OperatorSubtaskState | None = None,
        data: bytes | None = None,
    ) -> None:
        self.keyed = keyed
        self.operator_state = operator_state
        self.data = data


ChannelBuffers = dict[tuple[int, int], list[bytes]]


class _PendingUnaligned:
    """An unaligned checkpoint whose operators are captured, waiting for its input channel state."""

    def __init__(
        self, barrier: CheckpointBarrier, captures: list[_Capture], output: ChannelBuffers, end_of_input: bool
    ) -> None:
        self.barrier = barrier
        self.captures = captures
        self.output = output
        self.end_of_input = end_of_input


class SubtaskCheckpointCoordinator:
    def __init__(
        self,
        env: TaskEnvironment,
        operators: list[StreamOperator],
        broadcast_event: Callable[[object], None],
        storage: CheckpointStorage,
        broadcast_priority: Callable[[object], ChannelBuffers] | None = None,
    ) -> None:
        """``broadcast_priority``: puts a barrier ahead of all queued output and returns what it
        overtook per ``(writer, subpartition)`` (unaligned checkpoints)."""
        self._env = env
        self._broadcast_priority = broadcast_priority
        self._pending_unaligned: _PendingUnaligned | None = None
        self._operators = operators
        self._descriptors = list(env.vertex.operators)
        self._broadcast = broadcast_event
        self._storage = storage
        self.runner = AsyncCheckpointRunner(
            env.task_name_with_subtasks, env.checkpoint_responder, max_in_flight(env.job_config)
        )
        self._incremental = incremental_enabled(env.job_config)
        self._snapshotters: dict[str, IncrementalSnapshotter] = {}
        """Per keyed operator on RocksDB with incremental checkpoints: the files it can reuse."""

    def checkpoint(self, barrier: CheckpointBarrier, end_of_input: bool = False) -> None:
        cid = barrier.checkpoint_id
        try:
            captures = self._capture(barrier)
        except Exception as e:
            # The task fails (see the module docstring): no decline, no barrier downstream.
            log.warning(
                "%s: the synchronous part of checkpoint %d failed, the task fails: %s",
                self._env.task_name_with_subtasks,
                cid,
                e,
            )
            e.add_note(f"(while taking checkpoint {cid} in {self._env.task_name_with_subtasks})")
            raise
        self._broadcast(barrier)
        self.runner.submit(self._async_part(barrier, captures, end_of_input), self._env.cancelled.is_set)

    def start_unaligned(self, barrier: CheckpointBarrier, end_of_input: bool = False) -> None:
        """Unaligned checkpoint, on its first barrier: capture the operators, send the barrier
        ahead of all queued output and keep what it overtook; :meth:`finish_unaligned` follows
        once the input channel state is recorded."""
        assert self._broadcast_priority is not None, "unaligned checkpoints need broadcast_priority"
        cid = barrier.checkpoint_id
        self.abort_unaligned(None)
        try:
            captures = self._capture(barrier)
        except Exception as e:
            log.warning(
                "%s: snapshot for checkpoint %d failed: %s", self._env.task_name_with_subtasks, cid, e
            )
            self._broadcast_priority(barrier)
            responder = self._env.checkpoint_responder
            if responder is not None:
                responder.decline(cid, f"{type(e).__name__}: {e}")
            return
        output = self._broadcast_priority(barrier)
        self._pending_unaligned = _PendingUnaligned(barrier, captures, output, end_of_input)

    def finish_unaligned(self, checkpoint_id: int, input_state: ChannelBuffers) -> None:
        """The input channel state of ``checkpoint_id`` is complete: write everything."""
        pending = self._pending_unaligned
        if pending is None or pending.barrier.checkpoint_id != checkpoint_id:
            return  # its capture failed (declined already) or it was aborted
        self._pending_unaligned = None
        channel_state = channel_state_files.encode_channel_state(checkpoint_id, input_state, pending.output)
        self.runner.submit(
            self._async_part(pending.barrier, pending.captures, pending.end_of_input, channel_state),
            self._env.cancelled.is_set,
        )

    def abort_unaligned(self, checkpoint_id: int | None) -> None:
        """Drop the pending unaligned checkpoint (``checkpoint_id``, or whichever: None)."""
        pending = self._pending_unaligned
        if pending is None or (checkpoint_id is not None and pending.barrier.checkpoint_id != checkpoint_id):
            return
        self._pending_unaligned = None
        for c in pending.captures:
            if c.keyed is not None:
                c.keyed.release()

    def _channel_state(
        self,
        state: channel_state_files.ChannelStateFile,
        location: str,
        written: list[str],
        states: list[OperatorSubtaskState],
    ) -> None:
        """Write the channel state file and put its handle on the head operator's state."""
        env = self._env
        head = self._descriptors[0]
        rel = channel_state_files.channel_state_file(head.operator_id, env.subtask_index)
        data = channel_state_files.to_bytes(state)
        written.append(rel)
        self._storage.write_atomic(join(location, rel), data)
        handle = ChannelStateHandle(
            env.subtask_index, rel, len(data), state.num_input_buffers, state.num_output_buffers
        )
        for i, op_state in enumerate(states):
            if op_state.operator_id == head.operator_id:
                states[i] = msgspec.structs.replace(op_state, channel_state=handle)
                return
        states.insert(
            0,
            OperatorSubtaskState(
                operator_id=head.operator_id,
                subtask_index=env.subtask_index,
                parallelism=env.parallelism,
                max_parallelism=env.max_parallelism,
                uid=head.uid,
                name=head.name,
                channel_state=handle,
            ),
        )

    def _async_part(
        self,
        barrier: CheckpointBarrier,
        captures: list[_Capture],
        end_of_input: bool,
        channel_state: channel_state_files.ChannelStateFile | None = None,
    ) -> AsyncSnapshotPart:
        storage, location = self._storage, barrier.location
        written: list[str] = []

        def write(cancelled: threading.Event) -> TaskStateSnapshot:
            states: list[OperatorSubtaskState] = []
            for c in captures:
                if c.keyed is not None:
                    states.append(c.keyed.write(storage, location, cancelled, written))
                else:
                    assert c.operator_state is not None and c.operator_state.operator_state is not None
                    written.append(c.operator_state.operator_state.path)
                    storage.write_atomic(join(location, c.operator_state.operator_state.path), c.data or b"")
                    states.append(c.operator_state)
            if channel_state is not None and (channel_state.input or channel_state.output):
                self._channel_state(channel_state, location, written, states)
            return TaskStateSnapshot(operators=states, end_of_input=end_of_input)

        def release() -> None:
            for c in captures:
                if c.keyed is not None:
                    c.keyed.release()

        def cleanup() -> None:
            for c in captures:
                if isinstance(c.keyed, IncrementalCapture):
                    c.keyed.cleanup(storage)
                elif c.keyed is not None:
                    c.keyed.release()
            if written:
                storage.delete_files(location, written)

        return AsyncSnapshotPart(barrier.checkpoint_id, write, cleanup, release)

    def _capture(self, barrier: CheckpointBarrier) -> list[_Capture]:
        env = self._env
        captures: list[_Capture] = []
        try:
            for descriptor, op in zip(self._descriptors, self._operators, strict=True):
                snapshot_op = getattr(op, "snapshot_operator_state", None)
                operator_states = snapshot_op(barrier.checkpoint_id) if snapshot_op is not None else None
                backend = getattr(op, "backend", None)
                incremental = (
                    self._incremental
                    and barrier.checkpoint_type == CHECKPOINT  # savepoints stay full and self-contained
                    and hasattr(backend, "native_checkpoint")
                )
                if backend is not None and incremental:
                    snapshotter = self._snapshotters.get(descriptor.operator_id)
                    if snapshotter is None:
                        snapshotter = self._snapshotters[descriptor.operator_id] = IncrementalSnapshotter(
                            descriptor.operator_id, env.subtask_index, env.parallelism
                        )
                    captures.append(_Capture(snapshotter.capture(
                        backend, barrier.checkpoint_id, uid=descriptor.uid, name=descriptor.name,
                        operator_states=operator_states,
                    )))  # fmt: skip
                elif backend is not None:
                    keyed = snapshot_files.capture_keyed_backend(
                        backend,
                        uid=descriptor.uid,
                        name=descriptor.name,
                        operator_states=operator_states,
                        operator_id=descriptor.operator_id,
                        subtask_index=env.subtask_index,
                        parallelism=env.parallelism,
                    )
                    captures.append(_Capture(keyed))
                elif operator_states is not None:
                    data, infos = snapshot_files.encode_operator_state(operator_states)
                    rel = snapshot_files.operator_state_file(descriptor.operator_id, env.subtask_index)
                    state = OperatorSubtaskState(
                        operator_id=descriptor.operator_id,
                        subtask_index=env.subtask_index,
                        parallelism=env.parallelism,
                        max_parallelism=env.max_parallelism,
                        uid=descriptor.uid,
                        name=descriptor.name,
                        operator_state=OperatorStateHandle(
                            subtask_index=env.subtask_index, path=rel, size=len(data), states=infos
                        ),
                    )
                    captures.append(_Capture(None, state, data))
        except BaseException:
            for c in captures:
                if c.keyed is not None:
                    c.keyed.release()
            raise
        return captures

    def close(self, cancel: bool) -> None:
        """The task ends: ``cancel`` stops the writers in flight, else their acknowledgements go
        out first (a finishing task's last checkpoint)."""
        self.abort_unaligned(None)
        if not cancel:
            self.runner.wait_idle(self._env.cancelled.is_set)
        self.runner.close(cancel=cancel or self._env.cancelled.is_set())

    def notify_complete(self, checkpoint_id: int) -> None:
        for snapshotter in self._snapshotters.values():
            snapshotter.notify_complete(checkpoint_id)
        for op in self._operators:
            notify = getattr(op, "notify_checkpoint_complete", None)
            if notify is not None:
                notify(checkpoint_id)

    def notify_aborted(self, checkpoint_id: int) -> None:
        self.abort_unaligned(checkpoint_id)
        self.runner.abort(checkpoint_id)
        for snapshotter in self._snapshotters.values():
            snapshotter.notify_aborted(checkpoint_id)
        for op in self._operators:
            notify = getattr(op, "notify_checkpoint_aborted", None)
            if notify is not None:
                notify(checkpoint_id)
