"""The Dispatcher: accepts jobs, runs one JobManagerRunner per job, keeps finished jobs queryable.

The JobManager side never unpickles user code: a submitted JobGraph is
validated as data and handed to a JobMaster, whose TaskExecutors alone load
the user's functions.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from flott.configuration import Configuration
from flott.errors import DuplicateJobSubmissionError, JobAlreadyTerminalError, JobNotFoundError
from flott.runtime.dispatcher.gateway import DISPATCHER_ENDPOINT
from flott.runtime.jobgraph import JobGraph
from flott.runtime.jobmaster.job_master import JobMaster, now_ms
from flott.runtime.messages.cluster import TaskExecutorInfo
from flott.runtime.messages.job import ClusterOverview, ExecutionGraphInfo, JobDetails, JobResult
from flott.runtime.resourcemanager.gateway import ResourceManagerGateway
from flott.runtime.rpc.service import RpcEndpoint, RpcService

log = logging.getLogger(__name__)

_TERMINAL = ("FINISHED", "FAILED", "CANCELED")


@dataclass
class _ArchivedJob:
    info: ExecutionGraphInfo
    result: JobResult
    archived_at: float


@dataclass
class JobManagerRunner:
    """Owns one job's JobMaster and the future of its result (Flink: JobManagerRunner)."""

    job_graph: JobGraph
    job_master: JobMaster
    result: asyncio.Future[JobResult] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


def job_details(info: ExecutionGraphInfo) -> JobDetails:
    counts: dict[str, int] = {}
    for v in info.vertices:
        for state, n in v.task_counts.items():
            counts[state] = counts.get(state, 0) + n
    return JobDetails(
        job_id=info.job_id, job_name=info.job_name, status=info.status, start_time=info.start_time,
        end_time=info.end_time, duration=info.duration,
        last_modification=max(info.timestamps.values(), default=info.start_time),
        task_counts=counts, num_tasks=sum(v.parallelism for v in info.vertices),
    )


class Dispatcher(RpcEndpoint):
    endpoint_id = DISPATCHER_ENDPOINT

    def __init__(self, rpc: RpcService, config: Configuration, resource_manager: ResourceManagerGateway,
                 on_shutdown: Callable[[], Awaitable[None]] | None = None) -> None:
        self._rpc = rpc
        self._config = config
        self._rm = resource_manager
        self._on_shutdown = on_shutdown
        self.runners: dict[str, JobManagerRunner] = {}
        self.archive: OrderedDict[str, _ArchivedJob] = OrderedDict()
        self._max_archived = config.get_int("jobstore.max-capacity")
        self._archive_ttl = float(config.get_int("jobstore.expiration-time"))

    async def start(self) -> None:
        self._rpc.register(self)

    async def stop(self) -> None:
        for runner in list(self.runners.values()):
            with contextlib.suppress(Exception):
                await runner.job_master.cancel()
        for runner in list(self.runners.values()):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(runner.result), 5.0)
            await runner.job_master.stop()
        self._rpc.unregister(self.endpoint_id)

    # -- RPC -----------------------------------------------------------------------------------

    async def submit_job(self, job_graph: JobGraph) -> None:
        job_graph.validate()
        job_id = job_graph.job_id
        if job_id in self.runners or job_id in self.archive:
            raise DuplicateJobSubmissionError(f"job {job_id} has already been submitted")
        loop = asyncio.get_running_loop()
        result: asyncio.Future[JobResult] = loop.create_future()

        def on_terminal(res: JobResult, info: ExecutionGraphInfo) -> None:
            self._archive(info, res)
            if not result.done():
                result.set_result(res)
            runner = self.runners.pop(job_id, None)
            if runner is not None:
                loop.create_task(runner.job_master.stop())

        jm = JobMaster(job_graph, self._rpc, self._rm, self._config, on_terminal)
        self.runners[job_id] = JobManagerRunner(job_graph, jm, result)
        log.info("job %s (%s) submitted", job_id, job_graph.job_name)
        await jm.start()

    async def cancel_job(self, job_id: str) -> None:
        runner = self.runners.get(job_id)
        if runner is None:
            if job_id in self.archive:
                raise JobAlreadyTerminalError(
                    f"job {job_id} already reached {self.archive[job_id].result.status} and cannot be cancelled")
            raise JobNotFoundError(f"job {job_id} not found")
        await runner.job_master.cancel()

    async def request_job_status(self, job_id: str) -> str:
        return (await self.request_job(job_id)).status

    async def request_job(self, job_id: str) -> ExecutionGraphInfo:
        runner = self.runners.get(job_id)
        if runner is not None:
            return runner.job_master.execution_graph_info()
        archived = self._archived(job_id)
        return archived.info

    async def request_job_result(self, job_id: str, wait_s: float) -> JobResult | None:
        runner = self.runners.get(job_id)
        if runner is None:
            return self._archived(job_id).result
        try:
            return await asyncio.wait_for(asyncio.shield(runner.result), wait_s)
        except TimeoutError:
            return None

    async def request_multiple_job_details(self) -> list[JobDetails]:
        self._expire()
        live = [job_details(r.job_master.execution_graph_info()) for r in self.runners.values()]
        done = [job_details(a.info) for a in self.archive.values() if a.info.job_id not in self.runners]
        return sorted(live + done, key=lambda d: d.start_time, reverse=True)

    async def request_cluster_overview(self) -> ClusterOverview:
        tes = await self._rm.request_task_executor_infos()
        statuses = [a.result.status for a in self.archive.values()]
        return ClusterOverview(
            taskmanagers=len(tes), slots_total=sum(t.num_slots for t in tes),
            slots_available=sum(t.free_slots for t in tes), jobs_running=len(self.runners),
            jobs_finished=statuses.count("FINISHED"), jobs_cancelled=statuses.count("CANCELED"),
            jobs_failed=statuses.count("FAILED"),
        )

    async def request_task_executor_infos(self) -> list[TaskExecutorInfo]:
        return await self._rm.request_task_executor_infos()

    async def shutdown_cluster(self) -> None:
        if self._on_shutdown is not None:
            asyncio.get_running_loop().create_task(self._on_shutdown())

    # -- archive -------------------------------------------------------------------------------

    def _archive(self, info: ExecutionGraphInfo, result: JobResult) -> None:
        self.archive[info.job_id] = _ArchivedJob(info, result, time.monotonic())
        while len(self.archive) > self._max_archived:
            self.archive.popitem(last=False)

    def _expire(self) -> None:
        cutoff = time.monotonic() - self._archive_ttl
        for job_id in [j for j, a in self.archive.items() if a.archived_at < cutoff]:
            del self.archive[job_id]

    def _archived(self, job_id: str) -> _ArchivedJob:
        self._expire()
        archived = self.archive.get(job_id)
        if archived is None:
            raise JobNotFoundError(f"job {job_id} not found")
        return archived


__all__ = ["Dispatcher", "JobManagerRunner", "job_details", "now_ms"]
