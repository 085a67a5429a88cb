"""ClusterClient: what clients (JobClient, CLI) need of a cluster, whatever its kind.

MiniClusterClient talks to an embedded cluster's Dispatcher through its
gateway; RestClusterClient (remote clusters) speaks Flink's REST API. Both are
async; the synchronous JobClient wraps them.
"""

from __future__ import annotations

from typing import Protocol

from flott.runtime.dispatcher.gateway import DispatcherGateway
from flott.runtime.jobgraph import JobGraph
from flott.runtime.messages.job import ExecutionGraphInfo, JobDetails, JobResult
from flott.runtime.minicluster.mini_cluster import MiniCluster


class ClusterClient(Protocol):
    async def submit_job(self, job_graph: JobGraph) -> str: ...

    async def cancel_job(self, job_id: str) -> None: ...

    async def get_job_status(self, job_id: str) -> str: ...

    async def request_job(self, job_id: str) -> ExecutionGraphInfo: ...

    async def request_job_result(self, job_id: str, wait_s: float) -> JobResult | None: ...

    async def list_jobs(self) -> list[JobDetails]: ...

    async def close(self) -> None: ...


class MiniClusterClient:
    """A ClusterClient for an embedded MiniCluster; ``owns_cluster`` closes it with the client."""

    def __init__(self, cluster: MiniCluster, owns_cluster: bool = False) -> None:
        self.cluster = cluster
        self._gateway: DispatcherGateway = cluster.dispatcher_gateway()
        self._owns = owns_cluster

    async def submit_job(self, job_graph: JobGraph) -> str:
        await self._gateway.submit_job(job_graph)
        return job_graph.job_id

    async def cancel_job(self, job_id: str) -> None:
        await self._gateway.cancel_job(job_id)

    async def get_job_status(self, job_id: str) -> str:
        return await self._gateway.request_job_status(job_id)

    async def request_job(self, job_id: str) -> ExecutionGraphInfo:
        return await self._gateway.request_job(job_id)

    async def request_job_result(self, job_id: str, wait_s: float) -> JobResult | None:
        return await self._gateway.request_job_result(job_id, wait_s)

    async def list_jobs(self) -> list[JobDetails]:
        return await self._gateway.request_multiple_job_details()

    async def close(self) -> None:
        if self._owns:
            await self.cluster.close()
