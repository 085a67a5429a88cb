"""Task (execution) states and what crosses the wire about tasks."""

from __future__ import annotations

from enum import Enum

import msgspec

from flott.runtime.jobgraph import JobEdge, JobVertex
from flott.runtime.rpc.service import WireError


class ExecutionState(Enum):
    """Flink's ExecutionState: the life of one attempt of one subtask."""

    CREATED = "CREATED"
    SCHEDULED = "SCHEDULED"
    DEPLOYING = "DEPLOYING"
    INITIALIZING = "INITIALIZING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"
    CANCELING = "CANCELING"
    CANCELED = "CANCELED"
    FAILED = "FAILED"
    RECONCILING = "RECONCILING"

    def is_terminal(self) -> bool:
        return self in (ExecutionState.FINISHED, ExecutionState.CANCELED, ExecutionState.FAILED)


class InputChannelDescriptor(msgspec.Struct, frozen=True):
    producer_address: str
    partition_id: str
    subpartition_index: int


class InputGateDeploymentDescriptor(msgspec.Struct, frozen=True):
    input_index: int
    edge_ids: list[str]
    channels: list[InputChannelDescriptor]


class ResultPartitionDeploymentDescriptor(msgspec.Struct, frozen=True):
    edge_id: str
    partition_id: str
    num_subpartitions: int


class TaskDeploymentDescriptor(msgspec.Struct, frozen=True):
    """Everything a TaskExecutor needs to run one subtask attempt.

    ``artifacts`` carries only the user-code blobs this vertex references.
    """

    job_id: str
    job_name: str
    execution_id: str
    allocation_id: str
    vertex: JobVertex
    subtask_index: int
    attempt_number: int
    job_config: dict[str, str]
    input_gates: list[InputGateDeploymentDescriptor]
    output_partitions: list[ResultPartitionDeploymentDescriptor]
    artifacts: dict[str, bytes]
    edges: list[JobEdge] = []
    consumer_max_parallelism: dict[str, int] = {}
    """Per output edge id: the consuming vertex's max parallelism (its key groups)."""
    """The vertex's input and output edges (partitioners, key selectors)."""


class TaskExecutionState(msgspec.Struct, frozen=True):
    job_id: str
    execution_id: str
    state: ExecutionState
    error: WireError | None = None


class TaskMetrics(msgspec.Struct, frozen=True):
    execution_id: str
    records_in: int = 0
    records_out: int = 0
    buffers_in: int = 0
    buffers_out: int = 0
    busy_time_ns: int = 0
    back_pressured_time_ns: int = 0
    idle_time_ns: int = 0
