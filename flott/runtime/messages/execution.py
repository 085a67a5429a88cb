"""Task (execution) states and what crosses the wire about tasks."""

from __future__ import annotations

from enum import Enum
from typing import Literal

import msgspec

from flott.errors import WireError
from flott.runtime.jobgraph import JobEdge, JobVertex


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
    blocking: bool = False
    """Kept whole for consumers deployed once the producer finished (a BATCH job's exchanges)."""


PythonArtifactKind = Literal["file", "archive", "requirements", "requirements-cache"]
"""How a TaskExecutor uses a shipped file.

``file``: copied as is into its own directory, which goes on ``sys.path`` (a
``.py`` module, or any other file the job's code opens next to its modules).
``archive``: a ``.zip``/``.whl``/``.egg`` (directories arrive zipped),
extracted; the extracted root goes on ``sys.path``. ``requirements``: a pip
requirements file installed with ``pip install --target``. ``requirements-cache``:
a zipped directory of distributions pip installs from (``--no-index --find-links``).
"""


class PythonArtifactDescriptor(msgspec.Struct, frozen=True):
    """One of a job's Python files as the TaskExecutors get it: a name and a BlobServer key.

    ``blob_key`` is the file's sha256 (the TaskExecutor verifies it after the
    download); ``entry_name`` the file name the job gave it.
    """

    entry_name: str
    blob_key: str
    kind: PythonArtifactKind
    size: int = -1


class OperatorRestore(msgspec.Struct, frozen=True):
    """What one operator of a subtask reads back from a snapshot (planned by the JobMaster).

    Paths are absolute (the snapshot directory joined with the relative paths in its metadata).
    """

    key_group_files: list[tuple[int, str, int, int]] = []
    """``(key group, file, offset, size)`` for the key groups of the subtask's range that have
    state; offset -1: the whole file (format 1, a file per key group), else ``size`` bytes from
    ``offset`` of a file the subtask's key groups share (format 2)."""
    operator_state: list[tuple[str, str, int, int]] = []
    """``(file, state name, start, end)``: elements ``[start, end)`` of a SPLIT_DISTRIBUTE list state."""
    union_state_files: list[str] = []
    incremental: list[tuple[tuple[int, int], dict[str, str], dict[str, str], list[tuple[str, str]]]] = []
    """Incremental RocksDB checkpoints: per old subtask whose key groups overlap this one's,
    ``(its key-group range, {state id: name}, {state name: kind}, [(file name, file)])``."""
    channel_state: str | None = None
    """An unaligned checkpoint's in-flight data of this subtask (on the chain's head operator):
    replayed before any new input or output (flott.runtime.tasks.channel_state_replay)."""


class TaskRestore(msgspec.Struct, frozen=True):
    """The snapshot a subtask attempt starts from (a checkpoint after a failover, or a savepoint)."""

    checkpoint_id: int
    external_path: str
    operators: dict[str, OperatorRestore] = {}
    """By operator id; an operator missing here starts with empty state."""


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
    """The vertex's input and output edges (partitioners, key selectors)."""
    consumer_max_parallelism: dict[str, int] = {}
    """Per output edge id: the consuming vertex's max parallelism (its key groups)."""
    python_artifacts: list[PythonArtifactDescriptor] = []
    """The job's Python files, requirements and archives, in ``python.files`` order."""
    blob_server_address: str = ""
    """``host:port`` of the BlobServer holding ``python_artifacts`` (empty: none shipped)."""
    restore: TaskRestore | None = None
    """State to start from; None: a fresh start."""


class TaskMetrics(msgspec.Struct, frozen=True):
    execution_id: str
    records_in: int = 0
    records_out: int = 0
    buffers_in: int = 0
    buffers_out: int = 0
    busy_time_ns: int = 0
    back_pressured_time_ns: int = 0
    idle_time_ns: int = 0
    user_metrics: dict[str, str] = {}
    """The task's user metrics: Flink's query-scope name (``<operator>.<groups>.<name>``) → value."""


class TaskExecutionState(msgspec.Struct, frozen=True):
    job_id: str
    execution_id: str
    state: ExecutionState
    error: WireError | None = None
    metrics: TaskMetrics | None = None
    """With a terminal state: the task's final metrics (the last heartbeat may predate them)."""
    accumulators: dict[str, bytes] = {}
    """With FINISHED: the task's accumulators, opaque bytes (a collect sink's last results)."""
    result_bytes: dict[str, int] = {}
    """With FINISHED: per output edge id, the bytes the task wrote into its blocking partition
    (what the adaptive batch scheduler decides the consumers' parallelism from)."""
