"""The Dispatcher's RPC surface (the RestfulGateway: what REST handlers and clients call)."""

from __future__ import annotations

from typing import Any, Protocol

from flott.runtime.entrypoint.log_files import LogFileInfo
from flott.runtime.entrypoint.thread_dump import ThreadStack
from flott.runtime.jobgraph import JobGraph
from flott.runtime.messages.archived_execution_graph import ArchivedExecutionGraph
from flott.runtime.messages.cluster import TaskExecutorInfo
from flott.runtime.messages.job import (
    ClusterOverview,
    ExecutionGraphInfo,
    JobDetails,
    JobResult,
    JobsOverviewParts,
    OperationStatus,
)
from flott.runtime.messages.job_artifacts import JobArtifact
from flott.runtime.messages.rescale import JobRescales
from flott.runtime.messages.task_output import JobLogPage
from flott.runtime.metrics.flame_graph import StackSample
from flott.runtime.metrics.query_service import ClusterMetricDump

DISPATCHER_ENDPOINT = "dispatcher"


class DispatcherGateway(Protocol):
    async def submit_job(self, job_graph: JobGraph) -> None: ...

    async def cancel_job(self, job_id: str) -> None: ...

    async def request_job_status(self, job_id: str) -> str: ...

    async def request_job(self, job_id: str) -> ExecutionGraphInfo: ...

    async def request_job_result(self, job_id: str, wait_s: float) -> JobResult | None:
        """The result once the job is globally terminal; None if still running after ``wait_s``."""

    async def request_multiple_job_details(self) -> list[JobDetails]: ...

    async def request_jobs_overview(self, known_archived_version: str) -> JobsOverviewParts:
        """The overview as live and archived rows; the archived ones left out (None) when they
        are those of ``known_archived_version`` (what ``GET /jobs/overview`` keeps as JSON)."""

    async def request_job_logs(self, job_id: str, start: int, max_lines: int) -> JobLogPage:
        """A page of the job's own log (task output and status changes), kept after it ended."""

    async def request_cluster_overview(self) -> ClusterOverview: ...

    async def request_task_executor_infos(self) -> list[TaskExecutorInfo]: ...

    async def request_task_manager_log_list(self, resource_id: str) -> list[LogFileInfo]: ...

    async def request_task_manager_thread_dump(self, resource_id: str) -> list[ThreadStack]: ...

    async def request_task_manager_log_file(
        self, resource_id: str, kind: str, name: str, max_bytes: int
    ) -> bytes: ...

    async def shutdown_cluster(self) -> None: ...

    async def request_task_manager_thread_samples(
        self, resource_id: str, job_id: str, vertex_id: str, subtasks: list[int],
        num_samples: int, delay_ms: int, max_depth: int, *, timeout: float | None = None,
    ) -> list[StackSample]:
        """Stack samples of a vertex's task threads on one TaskExecutor (for a flame graph)."""

    async def request_metric_dumps(self) -> ClusterMetricDump:
        """The JobManager's metrics and those of every TaskManager that answered in time."""

    async def submit_job_with_artifacts(self, job_graph: JobGraph, artifacts: list[JobArtifact]) -> None:
        """Submit a job together with its files (REST ``POST /jobs``; the embedded executor).

        Each artifact's ``path`` is a file on the JobManager's host; the Python
        files among them are put into the BlobServer before the job starts and
        shipped to its TaskExecutors. The artifacts are only recorded when the
        submission is accepted, so a rejected duplicate never replaces the
        running job's files.
        """

    async def request_blob_server_port(self) -> int:
        """The port of the JobManager's BlobServer, where TaskExecutors fetch job files."""

    async def request_job_artifacts(self, job_id: str) -> list[JobArtifact]:
        """The files recorded for a job (empty if none were uploaded); JobNotFoundError if unknown."""

    async def request_job_rescales(self, job_id: str) -> JobRescales:
        """The job's rescales (PATCH /jobs/:id/rescaling); JobNotFoundError if the job is unknown."""

    async def request_execution_graph(self, job_id: str) -> ArchivedExecutionGraph:
        """The job down to each subtask attempt (Flink: requestExecutionGraphInfo), live or archived."""

    async def report_job_client_heartbeat(self, job_id: str, expired_timestamp: int) -> None:
        """An attached client is alive until ``expired_timestamp`` (ms); recorded, not yet enforced."""

    # -- checkpoints and savepoints (asynchronous operations: trigger id, then poll) -----------

    async def trigger_savepoint(
        self, job_id: str, target_directory: str | None, cancel_job: bool, trigger_id: str | None = None
    ) -> str:
        """Start a savepoint (and cancel the job after it, for cancel-with-savepoint); the trigger id."""

    async def stop_with_savepoint(
        self, job_id: str, target_directory: str | None, drain: bool, trigger_id: str | None = None
    ) -> str:
        """Start stop-with-savepoint; the job ends FINISHED once the savepoint completed."""

    async def trigger_checkpoint(self, job_id: str, trigger_id: str | None = None) -> str: ...

    async def rescale_job(self, job_id: str, parallelism: int, trigger_id: str | None = None) -> str:
        """Savepoint, then restart the job from it with every vertex at ``parallelism`` (one operation)."""

    async def get_job_operation_status(self, job_id: str, trigger_id: str) -> OperationStatus:
        """Status of a savepoint/stop/checkpoint/rescale operation.

        OperationNotFoundError (404) for a trigger id never seen (or expired)."""

    async def dispose_savepoint(self, savepoint_path: str, trigger_id: str | None = None) -> str: ...

    async def get_disposal_status(self, trigger_id: str) -> OperationStatus: ...

    async def request_checkpoint_statistics(self, job_id: str) -> dict[str, Any]:
        """The body of ``GET /jobs/:id/checkpoints`` in Flink's shape."""

    async def deliver_coordination_request(self, job_id: str, operator_id: str, request: bytes) -> bytes:
        """A client's request to an operator of a running job (Flink's
        deliverCoordinationRequestToCoordinator); JobAlreadyTerminalError once the job ended."""

    async def request_checkpoint_config(self, job_id: str) -> dict[str, Any]:
        """The body of ``GET /jobs/:id/checkpoints/config`` in Flink's shape."""
