"""A task's part in a checkpoint (Flink's SubtaskCheckpointCoordinator): snapshot, forward, acknowledge.

On the task's thread, when a source is asked to inject barrier *n* or an input task has
aligned on it:

1. every operator of the chain snapshots its state into the checkpoint's directory: keyed state
   one file per key group (through its keyed state backend), operator list state (a source's
   splits and positions, a transactional sink's committables) one file per subtask;
2. the barrier is broadcast on every output, after every record emitted before it;
3. the JobMaster gets the acknowledgement with the handles (relative paths and sizes).

A snapshot that fails declines the checkpoint instead (the job goes on; the coordinator decides
whether failed checkpoints matter), and the barrier is still forwarded so downstream tasks do
not wait for it.

Completion and abort notifications reach the operators through :meth:`notify_complete` and
:meth:`notify_aborted` (transactional sinks commit on completion).

The snapshot is synchronous: the task processes no records while its state is written. That is
the simple, correct choice; an asynchronous phase (copy-on-write state, upload on a thread) is
the known next step for large state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from flott.runtime.checkpoint import snapshot as snapshot_files
from flott.runtime.checkpoint.metadata import OperatorSubtaskState, TaskStateSnapshot
from flott.runtime.checkpoint.storage import CheckpointStorage
from flott.runtime.execution.environment import TaskEnvironment
from flott.runtime.io.network.api import CheckpointBarrier
from flott.runtime.operators.stream_operator import StreamOperator

log = logging.getLogger(__name__)




class SubtaskCheckpointCoordinator:
    def __init__(
        self,
        env: TaskEnvironment,
        operators: list[StreamOperator],
        broadcast_event: Callable[[object], None],
        storage: CheckpointStorage,
    ) -> None:
        self._env = env
        self._operators = operators
        self._descriptors = list(env.vertex.operators)
        self._broadcast = broadcast_event
        self._storage = storage

    def checkpoint(self, barrier: CheckpointBarrier, end_of_input: bool = False) -> None:
        responder = self._env.checkpoint_responder
        cid = barrier.checkpoint_id
        try:
            states = self._snapshot(barrier)
        except Exception as e:
            log.warning(
                "%s: snapshot for checkpoint %d failed: %s", self._env.task_name_with_subtasks, cid, e
            )
            self._broadcast(barrier)
            if responder is not None:
                responder.decline(cid, f"{type(e).__name__}: {e}")
            return
        self._broadcast(barrier)
        if responder is not None:
            responder.acknowledge(cid, TaskStateSnapshot(operators=states, end_of_input=end_of_input))

    def _snapshot(self, barrier: CheckpointBarrier) -> list[OperatorSubtaskState]:
        env = self._env
        states: list[OperatorSubtaskState] = []
        for descriptor, op in zip(self._descriptors, self._operators, strict=True):
            snapshot_op = getattr(op, "snapshot_operator_state", None)
            operator_states = snapshot_op(barrier.checkpoint_id) if snapshot_op is not None else None
            backend = getattr(op, "backend", None)
            if backend is not None:
                states.append(
                    snapshot_files.snapshot_keyed_backend(
                        self._storage,
                        barrier.location,
                        backend,
                        uid=descriptor.uid,
                        name=descriptor.name,
                        operator_states=operator_states,
                        operator_id=descriptor.operator_id,
                        subtask_index=env.subtask_index,
                        parallelism=env.parallelism,
                    )
                )
            elif operator_states is not None:
                handle = snapshot_files.write_operator_state(
                    self._storage,
                    barrier.location,
                    descriptor.operator_id,
                    env.subtask_index,
                    operator_states,
                )
                states.append(
                    OperatorSubtaskState(
                        operator_id=descriptor.operator_id,
                        subtask_index=env.subtask_index,
                        parallelism=env.parallelism,
                        max_parallelism=env.max_parallelism,
                        uid=descriptor.uid,
                        name=descriptor.name,
                        operator_state=handle,
                    )
                )
        return states

    def notify_complete(self, checkpoint_id: int) -> None:
        for op in self._operators:
            notify = getattr(op, "notify_checkpoint_complete", None)
            if notify is not None:
                notify(checkpoint_id)

    def notify_aborted(self, checkpoint_id: int) -> None:
        for op in self._operators:
            notify = getattr(op, "notify_checkpoint_aborted", None)
            if notify is not None:
                notify(checkpoint_id)
