"""What a running task sees of the TaskExecutor (Flink's ``Environment``).

The TaskExecutor builds one TaskEnvironment per deployed subtask and hands it
to :class:`flott.runtime.tasks.stream_task.StreamTask`, which runs on the
task's own thread. Everything here is safe to use from that thread.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from flott.runtime.io.network.api import InputGate, ResultPartitionWriter
from flott.runtime.jobgraph import JobEdge, JobVertex
from flott.runtime.messages.execution import TaskRestore

if TYPE_CHECKING:
    from flott.runtime.checkpoint.metadata import TaskStateSnapshot
    from flott.runtime.metrics.groups import TaskMetricGroup


@dataclass(frozen=True)
class TriggerCheckpointMail:
    """The JobMaster asks this source task to inject a barrier (and snapshot its state)."""

    checkpoint_id: int
    timestamp: int
    checkpoint_type: str
    location: str
    drain: bool = False


@dataclass(frozen=True)
class CheckpointCompleteMail:
    checkpoint_id: int
    final: bool = False


@dataclass(frozen=True)
class CheckpointAbortedMail:
    checkpoint_id: int


Mail = TriggerCheckpointMail | CheckpointCompleteMail | CheckpointAbortedMail


class CheckpointResponder(Protocol):
    """How a task answers the JobMaster's checkpoint coordinator (thread-safe; Flink's name)."""

    def acknowledge(self, checkpoint_id: int, snapshot: TaskStateSnapshot) -> None: ...

    def decline(self, checkpoint_id: int, reason: str) -> None: ...


@dataclass
class TaskIOMetrics:
    """Counters a task updates on its hot path (plain ints: one thread writes, others only read)."""

    num_records_in: int = 0
    num_records_out: int = 0
    num_buffers_in: int = 0
    num_buffers_out: int = 0
    busy_time_ns: int = 0
    back_pressured_time_ns: int = 0
    idle_time_ns: int = 0
    source_records: int = 0
    """Records the task's source emitted into the chain (its source operator's numRecordsOut)."""
    watermarks: list[int] = field(default_factory=list)
    """Slot i: the last watermark handed to the chain's i-th operator after the source; the last
    slot: the last one that left the chain (written once per watermark, read by metrics)."""


@dataclass
class OutputEdge:
    """One outgoing edge of the task's vertex and the partition the task writes it to."""

    edge: JobEdge
    writer: ResultPartitionWriter
    consumer_max_parallelism: int = 0
    """Max parallelism of the consuming vertex: hash routing must use the consumer's key groups."""


@dataclass
class InputEdgeGroup:
    """One logical input of the task (input 0, or 1 for two-input operators)."""

    input_index: int
    edges: list[JobEdge]
    gate: InputGate


@dataclass
class TaskEnvironment:
    job_id: str
    job_name: str
    vertex: JobVertex
    subtask_index: int
    attempt_number: int
    job_config: dict[str, str]
    inputs: list[InputEdgeGroup]
    outputs: list[OutputEdge]
    load_user_object: Callable[[str], Any]
    """Unpickle (cached) the user artifact with this blob id. Only ever called on a TaskExecutor."""
    metrics: TaskIOMetrics = field(default_factory=TaskIOMetrics)
    cancelled: threading.Event = field(default_factory=threading.Event)
    """Set by the TaskExecutor when the task must stop; the task loop checks it between batches."""
    stdout_prefix: str = ""
    mailbox: queue.SimpleQueue[Mail] = field(default_factory=queue.SimpleQueue)
    """Messages for the task thread (checkpoint triggers and notifications), read between batches."""
    checkpoint_responder: CheckpointResponder | None = None
    restore: TaskRestore | None = None
    """The snapshot this attempt starts from (None: empty state)."""
    metric_group: TaskMetricGroup | None = None
    coordination_handlers: dict[str, Callable[[bytes], bytes]] = field(default_factory=dict)
    """Per operator id: answers a client's coordination request (called on the TaskExecutor's loop
    thread, must not block; e.g. the collect sink)."""
    accumulators: dict[str, bytes] = field(default_factory=dict)
    """Set by operators before the task finishes; reported with the FINISHED state."""
    """The user metrics of this attempt's operators (created on first use when the TaskExecutor gave none)."""

    @property
    def parallelism(self) -> int:
        return self.vertex.parallelism

    @property
    def max_parallelism(self) -> int:
        return self.vertex.max_parallelism

    @property
    def task_name_with_subtasks(self) -> str:
        """Flink's ``name (i/n)#attempt`` naming of a subtask."""
        return f"{self.vertex.name} ({self.subtask_index + 1}/{self.parallelism})#{self.attempt_number}"
