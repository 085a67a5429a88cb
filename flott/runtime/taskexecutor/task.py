"""One deployed subtask attempt on a TaskExecutor (Flink's Task).

The task's work runs on a thread of its own so that the TaskExecutor's event
loop (heartbeats, RPC, network I/O) stays responsive however long a user
function takes. State changes are reported back to the loop thread-safely.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import traceback
from collections.abc import Callable
from typing import Any

import cloudpickle

from flott.errors import FlottError, TaskCancelledError, UserCodeError
from flott.runtime.execution.environment import (
    CheckpointResponder,
    InputEdgeGroup,
    Mail,
    OutputEdge,
    TaskEnvironment,
)
from flott.runtime.io.network.api import InputGate, ResultPartitionWriter
from flott.runtime.messages.execution import ExecutionState, TaskDeploymentDescriptor, TaskMetrics
from flott.runtime.metrics.groups import TaskMetricGroup
from flott.runtime.metrics.registry import MetricRegistry
from flott.runtime.metrics.task_io import register_task_io_metrics
from flott.runtime.rpc.service import WireError, error_to_wire

log = logging.getLogger(__name__)


_UNPICKLE_LOCK = threading.Lock()
"""One unpickling at a time per process. Unpickling imports the modules user objects name (the
user's, flott's API package, their libraries) on first use; task threads doing that at once can
deadlock in Python's per-module import locks when those packages import each other (seen:
``flott.datastream`` and its connectors). Serialising costs nothing on the data path: each object
is unpickled once per task, before its first record."""


class UserCodeLoader:
    """Unpickles a job's user objects on first use and keeps them (per task)."""

    def __init__(self, artifacts: dict[str, bytes]) -> None:
        self._artifacts = artifacts
        self._cache: dict[str, Any] = {}

    def __call__(self, blob_id: str) -> Any:
        obj = self._cache.get(blob_id)
        if obj is None:
            with _UNPICKLE_LOCK:
                obj = self._cache[blob_id] = cloudpickle.loads(self._artifacts[blob_id])
        return obj


class Task:
    def __init__(
        self,
        tdd: TaskDeploymentDescriptor,
        gates: list[InputGate],
        partitions: list[ResultPartitionWriter],
        loop: asyncio.AbstractEventLoop,
        report: Callable[[ExecutionState, WireError | None], None],
        invokable: Callable[[TaskEnvironment], Any],
        prepare: Callable[[threading.Event], None] | None = None,
        checkpoint_responder: CheckpointResponder | None = None,
        metric_registry: MetricRegistry | None = None,
        task_manager_id: str = "",
    ) -> None:
        """``prepare`` runs first on the task's thread, while the task is DEPLOYING.

        It blocks until the job's Python files are importable (Flink loads the
        user-code ClassLoader at the same point) and raises if they cannot be
        made so; it gets the task's cancel flag so a cancel does not wait for it.
        """
        self.tdd = tdd
        self._prepare = prepare
        self.execution_id = tdd.execution_id
        self._loop = loop
        self._report = report
        self._invokable = invokable
        edges = {e.id: e for e in tdd.edges}
        self.gates = gates
        self.partitions = partitions
        self.env = TaskEnvironment(
            job_id=tdd.job_id,
            job_name=tdd.job_name,
            vertex=tdd.vertex,
            subtask_index=tdd.subtask_index,
            attempt_number=tdd.attempt_number,
            job_config=tdd.job_config,
            inputs=[
                InputEdgeGroup(g.input_index, [edges[e] for e in g.edge_ids], gate)
                for g, gate in zip(tdd.input_gates, gates, strict=True)
            ],
            outputs=[
                OutputEdge(edges[p.edge_id], w, tdd.consumer_max_parallelism.get(p.edge_id, 0))
                for p, w in zip(tdd.output_partitions, partitions, strict=True)
            ],
            load_user_object=UserCodeLoader(tdd.artifacts),
            checkpoint_responder=checkpoint_responder,
            restore=tdd.restore,
            metric_group=TaskMetricGroup(
                metric_registry or MetricRegistry(),
                socket.gethostname(),
                task_manager_id,
                tdd.job_id,
                tdd.job_name,
                tdd.vertex.name,
                tdd.subtask_index,
                tdd.attempt_number,
                vertex_id=tdd.vertex.id,
                execution_id=tdd.execution_id,
            ),
        )
        assert self.env.metric_group is not None
        register_task_io_metrics(
            self.env.metric_group, self.env.metrics, gates, partitions, tdd.vertex.operators
        )
        self.state = ExecutionState.DEPLOYING
        self._thread = threading.Thread(target=self._run, name=self.env.task_name_with_subtasks, daemon=True)
        self._stream_task: Any = None
        self.final_metrics: TaskMetrics | None = None
        """The metrics as the task ended (set on the task's thread before its terminal state is reported)."""

    def start(self) -> None:
        self._thread.start()

    @property
    def thread(self) -> threading.Thread:
        """The thread the task runs on (sampled for flame graphs)."""
        return self._thread

    def metrics(self) -> TaskMetrics:
        m = self.env.metrics
        return TaskMetrics(
            self.execution_id,
            m.num_records_in,
            m.num_records_out,
            m.num_buffers_in,
            m.num_buffers_out,
            m.busy_time_ns,
            m.back_pressured_time_ns,
            m.idle_time_ns,
            self.env.metric_group.dump() if self.env.metric_group is not None else {},
        )

    def _set_state(self, state: ExecutionState, error: WireError | None = None) -> None:
        self.state = state
        self._loop.call_soon_threadsafe(self._report, state, error)

    def _run(self) -> None:
        error: WireError | None = None
        final = ExecutionState.FINISHED
        try:
            if self._prepare is not None:
                self._prepare(self.env.cancelled)
            self._set_state(ExecutionState.INITIALIZING)
            self._stream_task = self._invokable(self.env)
            if self.env.cancelled.is_set():
                raise TaskCancelledError("cancelled before start")
            self._set_state(ExecutionState.RUNNING)
            self._stream_task.invoke()
            if self.env.cancelled.is_set():
                final = ExecutionState.CANCELED
        except TaskCancelledError:
            final = ExecutionState.CANCELED
        except BaseException as e:  # every failure of a task is reported, whatever raised it
            if self.env.cancelled.is_set():
                final = ExecutionState.CANCELED
            else:
                final = ExecutionState.FAILED
                if isinstance(e, FlottError):
                    error = error_to_wire(e)
                else:
                    error = error_to_wire(
                        UserCodeError(
                            type(e).__name__,
                            str(e),
                            "".join(traceback.format_exception(e)),
                            self.env.task_name_with_subtasks,
                        )
                    )
        finally:
            self._release(final is not ExecutionState.FINISHED)
        self.final_metrics = self.metrics()
        if self.env.metric_group is not None:
            self.env.metric_group.close()
        self._set_state(final, error)

    def _release(self, failed: bool) -> None:
        for gate in self.gates:
            with contextlib.suppress(Exception):
                gate.close()
        if failed:
            for p in self.partitions:
                with contextlib.suppress(Exception):
                    p.release()

    def result_bytes(self) -> dict[str, int]:
        """Per output edge: bytes written into its blocking partition (none for pipelined ones)."""
        out = {}
        for p, writer in zip(self.tdd.output_partitions, self.partitions, strict=True):
            produced = getattr(writer, "num_bytes_produced", None)
            if p.blocking and isinstance(produced, int):
                out[p.edge_id] = produced
        return out

    def deliver(self, mail: Mail) -> None:
        """A checkpoint trigger or notification for the task's thread."""
        self.env.mailbox.put(mail)

    def cancel(self) -> None:
        """Ask the task to stop; its thread unwinds and reports CANCELED."""
        if self.state.is_terminal():
            return
        self.env.cancelled.set()
        st = self._stream_task
        if st is not None and hasattr(st, "cancel"):
            with contextlib.suppress(Exception):
                st.cancel()
        for gate in self.gates:
            with contextlib.suppress(Exception):
                gate.close()
        for p in self.partitions:
            with contextlib.suppress(Exception):
                p.release()

    def join(self, timeout: float) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()
