"""The Dispatcher's RPC surface (the RestfulGateway: what REST handlers and clients call)."""

from __future__ import annotations

from typing import Protocol

from flott.runtime.jobgraph import JobGraph
from flott.runtime.messages.archived_execution_graph import ArchivedExecutionGraph
from flott.runtime.messages.cluster import TaskExecutorInfo
from flott.runtime.messages.job import ClusterOverview, ExecutionGraphInfo, JobDetails, JobResult
from flott.runtime.messages.job_artifacts import JobArtifact

DISPATCHER_ENDPOINT = "dispatcher"


class DispatcherGateway(Protocol):
    async def submit_job(self, job_graph: JobGraph) -> None: ...

    async def cancel_job(self, job_id: str) -> None: ...

    async def request_job_status(self, job_id: str) -> str: ...

    async def request_job(self, job_id: str) -> ExecutionGraphInfo: ...

    async def request_job_result(self, job_id: str, wait_s: float) -> JobResult | None:
        """The result once the job is globally terminal; None if still running after ``wait_s``."""

    async def request_multiple_job_details(self) -> list[JobDetails]: ...

    async def request_cluster_overview(self) -> ClusterOverview: ...

    async def request_task_executor_infos(self) -> list[TaskExecutorInfo]: ...

    async def shutdown_cluster(self) -> None: ...

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

    async def request_execution_graph(self, job_id: str) -> ArchivedExecutionGraph:
        """The job down to each subtask attempt (Flink: requestExecutionGraphInfo), live or archived."""

    async def report_job_client_heartbeat(self, job_id: str, expired_timestamp: int) -> None:
        """An attached client is alive until ``expired_timestamp`` (ms); recorded, not yet enforced."""
