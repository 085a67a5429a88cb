"""ClusterClient: what clients (JobClient, CLI) need of a cluster, whatever its kind.

MiniClusterClient talks to an embedded cluster's Dispatcher through its
gateway; RestClusterClient (remote clusters) speaks Flink's REST API. Both are
async; the synchronous JobClient wraps them.

Savepoints, stop-with-savepoint, checkpoints, disposal and rescaling are
asynchronous operations on the cluster: a trigger returns an id, the status is
polled until COMPLETED (:func:`wait_for_operation`, shared by both clients).
Each client method triggers and then waits, at most ``client.timeout``
(Flink's key, default 60 s) unless a ``timeout_s`` is given. A failed
operation raises :class:`OperationFailedError` carrying the cluster's cause;
one still running at the deadline raises RpcTimeoutError with its trigger id.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol

from flott.configuration import Configuration
from flott.errors import OperationFailedError, RpcTimeoutError, UserCodeError, error_from_wire
from flott.runtime.gateways.dispatcher_gateway import DispatcherGateway
from flott.runtime.jobgraph import JobGraph
from flott.runtime.messages.job import ExecutionGraphInfo, JobDetails, JobResult, OperationStatus
from flott.runtime.metrics.query_service import ClusterMetricDump
from flott.runtime.minicluster.mini_cluster import MiniCluster

CLIENT_TIMEOUT_KEY = "client.timeout"
DEFAULT_CLIENT_TIMEOUT = "60 s"


def operation_timeout_s(config: Configuration) -> float:
    """How long a client waits for an asynchronous operation: ``client.timeout`` (default 60 s)."""
    return config.get_seconds(CLIENT_TIMEOUT_KEY, DEFAULT_CLIENT_TIMEOUT)


async def wait_for_operation(
    fetch: Callable[[], Awaitable[OperationStatus]],
    what: str,
    timeout_s: float,
    trigger_id: str = "",
) -> OperationStatus:
    """Poll ``fetch`` until the operation is COMPLETED (10 ms, doubling to 2 s between polls).

    Returns the completed status; raises OperationFailedError with the cluster's cause if the
    operation failed, RpcTimeoutError if it is still running after ``timeout_s`` seconds.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    pause = 0.01
    while True:
        status = await fetch()
        if status.status == "COMPLETED":
            if status.failure is not None:
                cause = error_from_wire(status.failure)
                detail = str(cause)
                if isinstance(cause, UserCodeError) and cause.traceback:
                    detail += "\n\nTraceback on the TaskExecutor:\n" + cause.traceback.rstrip()
                raise OperationFailedError(f"{what} failed: {detail}", cause)
            return status
        remaining = deadline - loop.time()
        if remaining <= 0:
            tid = f" (trigger id {trigger_id})" if trigger_id else ""
            raise RpcTimeoutError(
                f"{what} did not complete within {timeout_s:g}s{tid}; it may still complete on the "
                f"cluster (raise {CLIENT_TIMEOUT_KEY} to wait longer)"
            )
        await asyncio.sleep(min(pause, remaining))
        pause = min(pause * 2, 2.0)


class ClusterClient(Protocol):
    async def submit_job(self, job_graph: JobGraph) -> str: ...

    async def cancel_job(self, job_id: str) -> None: ...

    async def get_job_status(self, job_id: str) -> str: ...

    async def request_job(self, job_id: str) -> ExecutionGraphInfo: ...

    async def request_job_result(self, job_id: str, wait_s: float) -> JobResult | None: ...

    async def list_jobs(self) -> list[JobDetails]: ...

    async def send_coordination_request(self, job_id: str, operator_id: str, request: bytes) -> bytes:
        """Opaque bytes to an operator of a running job (the collect sink); its answer."""

    async def trigger_savepoint(
        self, job_id: str, savepoint_directory: str | None = None, *, timeout_s: float | None = None
    ) -> str:
        """Take a savepoint of the running job; its path once completed."""

    async def stop_with_savepoint(
        self,
        job_id: str,
        advance_to_end_of_event_time: bool = False,
        savepoint_directory: str | None = None,
        *,
        timeout_s: float | None = None,
    ) -> str:
        """Stop the job with a savepoint (the job ends FINISHED); the savepoint's path."""

    async def close(self) -> None: ...


class MiniClusterClient:
    """A ClusterClient for an embedded MiniCluster; ``owns_cluster`` closes it with the client."""

    def __init__(self, cluster: MiniCluster, owns_cluster: bool = False) -> None:
        self.cluster = cluster
        self._gateway: DispatcherGateway = cluster.dispatcher_gateway()
        self._owns = owns_cluster
        self.operation_timeout_s = operation_timeout_s(cluster.config)

    async def submit_job(self, job_graph: JobGraph) -> str:
        await self._gateway.submit_job(job_graph)
        return job_graph.job_id

    async def cancel_job(self, job_id: str) -> None:
        await self._gateway.cancel_job(job_id)

    async def get_job_status(self, job_id: str) -> str:
        return await self._gateway.request_job_status(job_id)

    async def request_job(self, job_id: str) -> ExecutionGraphInfo:
        return await self._gateway.request_job(job_id)

    async def request_metric_dumps(self) -> ClusterMetricDump:
        """Every process's metrics, read now (what ``flott run``'s progress line shows)."""
        return await self._gateway.request_metric_dumps()

    async def request_job_result(self, job_id: str, wait_s: float) -> JobResult | None:
        return await self._gateway.request_job_result(job_id, wait_s)

    async def list_jobs(self) -> list[JobDetails]:
        return await self._gateway.request_multiple_job_details()

    async def send_coordination_request(self, job_id: str, operator_id: str, request: bytes) -> bytes:
        return await self._gateway.deliver_coordination_request(job_id, operator_id, request)

    # -- asynchronous operations (the Dispatcher resolves a missing directory from the job's and the
    # cluster's configured default savepoint directory) ----------------------------------------

    async def _job_operation(
        self, job_id: str, trigger_id: str, what: str, timeout_s: float | None
    ) -> OperationStatus:
        return await wait_for_operation(
            lambda: self._gateway.get_job_operation_status(job_id, trigger_id),
            what,
            self.operation_timeout_s if timeout_s is None else timeout_s,
            trigger_id,
        )

    async def trigger_savepoint(
        self, job_id: str, savepoint_directory: str | None = None, *, timeout_s: float | None = None
    ) -> str:
        trigger_id = await self._gateway.trigger_savepoint(job_id, savepoint_directory, False)
        status = await self._job_operation(job_id, trigger_id, f"Savepoint of job {job_id}", timeout_s)
        return status.location or ""

    async def cancel_with_savepoint(
        self, job_id: str, savepoint_directory: str | None = None, *, timeout_s: float | None = None
    ) -> str:
        trigger_id = await self._gateway.trigger_savepoint(job_id, savepoint_directory, True)
        what = f"Cancel-with-savepoint of job {job_id}"
        status = await self._job_operation(job_id, trigger_id, what, timeout_s)
        return status.location or ""

    async def stop_with_savepoint(
        self,
        job_id: str,
        advance_to_end_of_event_time: bool = False,
        savepoint_directory: str | None = None,
        *,
        timeout_s: float | None = None,
    ) -> str:
        trigger_id = await self._gateway.stop_with_savepoint(
            job_id, savepoint_directory, advance_to_end_of_event_time
        )
        what = f"Stop-with-savepoint of job {job_id}"
        status = await self._job_operation(job_id, trigger_id, what, timeout_s)
        return status.location or ""

    async def trigger_checkpoint(self, job_id: str, *, timeout_s: float | None = None) -> int:
        trigger_id = await self._gateway.trigger_checkpoint(job_id)
        status = await self._job_operation(job_id, trigger_id, f"Checkpoint of job {job_id}", timeout_s)
        return status.checkpoint_id if status.checkpoint_id is not None else -1

    async def rescale_job(self, job_id: str, parallelism: int, *, timeout_s: float | None = None) -> None:
        trigger_id = await self._gateway.rescale_job(job_id, parallelism)
        what = f"Rescaling job {job_id} to parallelism {parallelism}"
        await self._job_operation(job_id, trigger_id, what, timeout_s)

    async def dispose_savepoint(self, savepoint_path: str, *, timeout_s: float | None = None) -> None:
        trigger_id = await self._gateway.dispose_savepoint(savepoint_path)
        await wait_for_operation(
            lambda: self._gateway.get_disposal_status(trigger_id),
            f"Disposal of savepoint {savepoint_path}",
            self.operation_timeout_s if timeout_s is None else timeout_s,
            trigger_id,
        )

    async def close(self) -> None:
        if self._owns:
            await self.cluster.close()
