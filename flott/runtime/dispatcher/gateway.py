"""The Dispatcher's RPC surface (the RestfulGateway: what REST handlers and clients call)."""

from __future__ import annotations

from typing import Protocol

from flott.runtime.jobgraph import JobGraph
from flott.runtime.messages.cluster import TaskExecutorInfo
from flott.runtime.messages.job import ClusterOverview, ExecutionGraphInfo, JobDetails, JobResult

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
