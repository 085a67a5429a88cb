"""The Dispatcher: accepts jobs, runs one JobManagerRunner per job, keeps finished jobs queryable.

The JobManager side never unpickles user code: a submitted JobGraph is
validated as data and handed to a JobMaster, whose TaskExecutors alone load
the user's functions.

A job's files (uploaded with ``POST /jobs``, or named in place by the embedded
executor) go into the BlobServer before the job starts; the JobMaster gets
their keys and names them in every deployment. When the job is globally
terminal its blobs are deleted (Flink's global cleanup); a Dispatcher that
stops with jobs still running leaves them for the server's own shutdown.

Where each job is in its life (submitted, initializing, running, rescaling, archived) is decided
by the pure :class:`~flott.runtime.dispatcher.job_lifecycle.DispatcherJobs`; this class is its
shell: it feeds it events (a submission claimed, a JobMaster running, a job terminal, a cancel
request ...), carries out the actions it returns (cancel or stop a JobMaster, delete the job's
blobs, record the result in HA) and keeps what cannot be data: the JobMaster objects.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from flott.configuration import Configuration
from flott.errors import (
    DuplicateJobSubmissionError,
    FlottError,
    JobAlreadyTerminalError,
    JobArtifactError,
    JobNotFoundError,
    LeadershipLostError,
)
from flott.runtime.blob.blob_server import BlobServer
from flott.runtime.blob.python_artifacts import artifact_kind
from flott.runtime.checkpoint.storage import (
    CONFIGURED_DIR_KEYS,
    STORAGE_PATH_JOB_KEYS,
    FsspecCheckpointStorage,
    StoragePathPolicy,
)
from flott.runtime.dispatcher import admission, job_lifecycle, savepoints
from flott.runtime.dispatcher.completed_operation_cache import CompletedOperationCache
from flott.runtime.dispatcher.job_lifecycle import (
    ArchivedJob,
    CancelJobMaster,
    CleanupJobFiles,
    DispatcherJobs,
    DispatcherJobStatus,
    RecordJobResult,
    StopJobMaster,
)
from flott.runtime.dispatcher.rescale_history import HISTORY_SIZE_KEY, RescaleHistory
from flott.runtime.entrypoint.log_files import LogFileInfo
from flott.runtime.entrypoint.thread_dump import ThreadStack
from flott.runtime.executiongraph.failover.restart_backoff_time_strategy import web_description
from flott.runtime.gateways.dispatcher_gateway import DISPATCHER_ENDPOINT
from flott.runtime.gateways.resource_manager_gateway import ResourceManagerGateway
from flott.runtime.highavailability.job_persistence import ArchivedJobRecord
from flott.runtime.jobgraph import JobGraph
from flott.runtime.jobmaster.failure_history import archived_execution, exception_history, prior_attempts
from flott.runtime.jobmaster.job_log import JobLogs
from flott.runtime.jobmaster.job_master import JobMaster, now_ms
from flott.runtime.messages.archived_execution_graph import (
    ArchivedExecution,
    ArchivedExecutionGraph,
    ArchivedJobEdge,
    ArchivedJobVertex,
)
from flott.runtime.messages.cluster import TaskExecutorInfo
from flott.runtime.messages.execution import PythonArtifactDescriptor
from flott.runtime.messages.job import (
    ClusterOverview,
    ExecutionGraphInfo,
    JobDetails,
    JobResult,
    JobsOverviewParts,
    OperationStatus,
    insertion_points,
    interleave,
)
from flott.runtime.messages.job_artifacts import JobArtifact
from flott.runtime.messages.rescale import JobRescales
from flott.runtime.messages.task_output import JobLogPage
from flott.runtime.metrics.flame_graph import StackSample
from flott.runtime.metrics.job_metrics import close_job_metrics, job_metric_values, register_job_metrics
from flott.runtime.metrics.jobmanager_metrics import ClusterGauges
from flott.runtime.metrics.query_service import ClusterMetricDump, dump_registry
from flott.runtime.metrics.reporter_setup import close_reporters, process_metric_registry
from flott.runtime.rpc.service import RpcEndpoint, RpcService, error_to_wire

if TYPE_CHECKING:
    from flott.runtime.checkpoint.restore import SnapshotToRestore
    from flott.runtime.highavailability.job_persistence import DispatcherHaServices

log = logging.getLogger(__name__)

@dataclass
class JobManagerRunner:
    """Owns one job's JobMaster and the future of its result (Flink: JobManagerRunner)."""

    job_graph: JobGraph
    job_master: JobMaster
    result: asyncio.Future[JobResult]


def archive_execution_graph(job_master: JobMaster, endpoints: Mapping[str, str]) -> ArchivedExecutionGraph:
    """Snapshot a JobMaster's graph down to each subtask attempt (what REST's job views read).

    ``endpoints`` maps TaskExecutor resource ids to their data addresses; the
    JobMaster knows only resource ids, the ResourceManager knows addresses.
    """
    g = job_master.graph
    jg = g.job_graph  # as it runs: a BATCH vertex whose parallelism is not decided yet shows -1
    vertices = []
    for v in jg.vertices:
        subtasks = [archived_execution(ex, job_master.metrics, endpoints) for ex in g.by_vertex.get(v.id, [])]
        vertices.append(ArchivedJobVertex(
            id=v.id, name=v.name, parallelism=v.parallelism, max_parallelism=v.max_parallelism,
            operator_names=[op.name for op in v.operators], subtasks=subtasks,
            prior_attempts=prior_attempts(g, v.id, job_master.metrics, endpoints),
        ))
    ts = dict(g.status_timestamps)
    return ArchivedExecutionGraph(
        job_id=jg.job_id, job_name=jg.job_name, status=g.status.name,
        job_type="BATCH" if jg.config.get("execution.runtime-mode") == "BATCH" else "STREAMING",
        state_timestamps=ts, now=now_ms(),
        max_parallelism=max((v.max_parallelism for v in jg.vertices), default=-1),
        vertices=vertices,
        edges=[ArchivedJobEdge(source=e.source, target=e.target, partitioner=e.partitioner.kind,
                               target_input=e.target_input) for e in jg.edges],
        failure=g.failure,
        failure_timestamp=ts.get("FAILING", ts.get("FAILED", 0)) if g.failure is not None else 0,
        job_config=dict(jg.config),
        num_restarts=g.num_restarts,
        restart_strategy=web_description(g.restart_policy),
        exception_history=exception_history(g, jg, endpoints),
    )


def _with_endpoints(graph: ArchivedExecutionGraph, endpoints: Mapping[str, str]) -> ArchivedExecutionGraph:
    """Fill endpoints learnt after the snapshot was taken (archived jobs)."""
    if all(s.endpoint or not s.resource_id for v in graph.vertices for s in v.subtasks):
        return graph
    def fill(s: ArchivedExecution) -> ArchivedExecution:
        if s.endpoint or not s.resource_id:
            return s
        return msgspec.structs.replace(s, endpoint=endpoints.get(s.resource_id, ""))

    vertices = [msgspec.structs.replace(v, subtasks=[fill(s) for s in v.subtasks]) for v in graph.vertices]
    return msgspec.structs.replace(graph, vertices=vertices)


_METRIC_DUMP_TIMEOUT_S = 3.0
"""A TaskManager that has not answered for its metrics by then is left out of that dump."""


def _job_values(jm: JobMaster) -> dict[str, Any]:
    g = jm.graph
    stats = jm.checkpointing.coordinator.stats if jm.checkpointing is not None else None
    return job_metric_values(g.status.name, g.status_timestamps, now_ms(), g.num_restarts, stats)


def job_details(info: ExecutionGraphInfo) -> JobDetails:
    counts: dict[str, int] = {}
    for v in info.vertices:
        for state, n in v.task_counts.items():
            counts[state] = counts.get(state, 0) + n
    return JobDetails(
        job_id=info.job_id, job_name=info.job_name, status=info.status, start_time=info.start_time,
        end_time=info.end_time, duration=info.duration,
        last_modification=max(info.timestamps.values(), default=info.start_time),
        task_counts=counts, num_tasks=sum(max(0, v.parallelism) for v in info.vertices),
        job_type=info.job_type,
    )


def _overview_of(archived: ArchivedJob) -> JobDetails:
    if archived.overview is None:
        archived.overview = job_details(archived.info)
    return archived.overview


def _started(d: JobDetails) -> int:
    return d.start_time


@dataclass(frozen=True)
class _ArchivedOverview:
    """The archived jobs' rows of the jobs overview, newest first, as of one archive version."""

    version: int
    rows: list[JobDetails]
    negated_starts: list[int]
    job_ids: frozenset[str]


class Dispatcher(RpcEndpoint):
    endpoint_id = DISPATCHER_ENDPOINT

    def __init__(self, rpc: RpcService, config: Configuration, resource_manager: ResourceManagerGateway,
                 on_shutdown: Callable[[], Awaitable[None]] | None = None,
                 blob_server: BlobServer | None = None,
                 ha: DispatcherHaServices | None = None) -> None:
        """``ha`` (``high-availability.type: zookeeper``): jobs are stored before they are
        acknowledged, JobMasters get leader-derived tokens and record their checkpoints, and
        globally terminal jobs are written to the JobResultStore; None keeps all of it off."""
        self._ha = ha
        self._rpc = rpc
        self._blob_server = blob_server
        self._config = config
        self._rm = resource_manager
        self._on_shutdown = on_shutdown
        self.jobs = DispatcherJobs(
            config.get_int("jobstore.max-capacity"), float(config.get_int("jobstore.expiration-time"))
        )
        """Every job's place in its lifecycle (the pure core)."""
        self.runners: dict[str, JobManagerRunner] = {}
        """The JobMasters of the jobs the core has RUNNING or RESCALING."""
        self._instance = uuid.uuid4().hex
        """Names this Dispatcher in the archive versions it hands out (no two instances share one)."""
        self._archived_overview_kept: _ArchivedOverview | None = None
        self._archived_counts_kept: tuple[int, int, int, int] = (-1, 0, 0, 0)
        """(archive version, FINISHED, CANCELED, FAILED): ``GET /overview`` counted every
        archived job per request."""
        self._clock: Callable[[], float] = time.monotonic
        self._te_endpoints: dict[str, str] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._view_updater: asyncio.Task[None] | None = None
        self._storage = FsspecCheckpointStorage()
        self._operations: CompletedOperationCache[tuple[int | None, str]] = CompletedOperationCache(
            config.get_seconds("rest.async.store-duration", "300 s")
        )
        self._limits = admission.AdmissionLimits.from_config(config)
        self._rescales: dict[str, RescaleHistory] = {}
        """Per job, the rescales PATCH /jobs/:id/rescaling carried out (kept while the job is known)."""
        self._storage_policy = StoragePathPolicy.from_config(config.to_dict())
        self._savepoint_locations: set[str] = {
            config.get(k) for k in CONFIGURED_DIR_KEYS if config.get(k, "").strip()
        }
        """Where disposal may delete savepoints: configured directories, and every directory a
        savepoint of this Dispatcher was written to."""
        self.metric_registry = process_metric_registry(
            config, "jobmanager", bind_host=config.get("jobmanager.bind-host")
        )
        """The JobManager process's metrics (its reporters refuse a bad configuration here)."""
        assert self.metric_registry.process_group is not None
        self._cluster_gauges = ClusterGauges(
            self.metric_registry.process_group, lambda: len(self.runners),
            lambda: self._rm.request_task_executor_infos(),
        )
        """numRegisteredTaskManagers, taskSlotsTotal, taskSlotsAvailable, numRunningJobs."""
        self.job_logs = JobLogs(config)
        """The jobs' own logs (task output, status changes), kept after the jobs end."""
        self._log_retention: asyncio.Task[None] | None = None
        self._gauge_refresher: asyncio.Task[None] | None = None

    # -- the core: events in, actions out -------------------------------------------------------

    def _handle(self, event: job_lifecycle.Event) -> None:
        for action in self.jobs.handle(event, self._clock()):
            if isinstance(action, CancelJobMaster):
                runner = self.runners.get(action.job_id)
                if runner is not None:
                    runner.job_master.request_cancel()
            elif isinstance(action, StopJobMaster):
                runner = self.runners.pop(action.job_id, None)
                if runner is not None:
                    self._spawn(runner.job_master.stop())
            elif isinstance(action, CleanupJobFiles):
                if self._blob_server is not None:
                    self._spawn(asyncio.to_thread(self._blob_server.cleanup_job, action.job_id))
            elif isinstance(action, RecordJobResult):
                if self._ha is not None:
                    self._spawn(self._ha.job_terminal(action.job_id, _record_of(action.archived)))
            self._job_action_done(action)

    def _job_action_done(self, action: job_lifecycle.Action) -> None:
        """Hook for subclasses (the MiniDispatcher learns the application's end here)."""

    async def start(self) -> None:
        self._rpc.register(self)
        loop = asyncio.get_running_loop()
        self._view_updater = loop.create_task(self.metric_registry.run_view_updater())
        self._log_retention = loop.create_task(self.job_logs.run_retention(self.jobs.knows))
        self._gauge_refresher = loop.create_task(self._cluster_gauges.run())

    async def stop(self) -> None:
        for runner in list(self.runners.values()):
            with contextlib.suppress(Exception):
                await runner.job_master.cancel()
        for runner in list(self.runners.values()):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(runner.result), 5.0)
            await runner.job_master.stop()
        self._rpc.unregister(self.endpoint_id)
        # The Dispatcher owns its background work: the metric view updater stops, the job
        # clean-ups (HA terminal records, blob removal) are given a bounded time to finish, so
        # nothing is left pending on a loop that is about to stop.
        for timer in (self._view_updater, self._log_retention, self._gauge_refresher):
            if timer is not None:
                timer.cancel()
                await asyncio.gather(timer, return_exceptions=True)
        background = list(self._background)
        if background:
            await asyncio.wait(background, timeout=5.0)
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        close_reporters(self.metric_registry)

    # -- high availability (used by the leader process; never in ``none`` mode) ---------------

    def suspend(self, reason: str) -> list[JobMaster]:
        """Leadership lost: stop serving and stop every JobMaster at once, ending no job (the next
        leader recovers them). Returns the JobMasters; the caller awaits their ``stop()``."""
        self._rpc.unregister(self.endpoint_id)
        suspended = []
        for runner in self.runners.values():
            runner.job_master.suspend(reason)
            if not runner.result.done():
                runner.result.set_exception(LeadershipLostError(f"job {runner.job_graph.job_id}: {reason}"))
                runner.result.add_done_callback(lambda f: f.exception())
            suspended.append(runner.job_master)
        self.runners.clear()
        for task in list(self._background):
            task.cancel()
        for timer in (self._view_updater, self._log_retention, self._gauge_refresher):
            if timer is not None:
                timer.cancel()
        close_reporters(self.metric_registry)
        return suspended

    async def start_recovered_job(
        self,
        job_graph: JobGraph,
        python_artifacts: list[PythonArtifactDescriptor],
        artifacts: list[JobArtifact],
        snapshot: SnapshotToRestore | None,
    ) -> None:
        """Run a job a previous leader acknowledged, from ``snapshot`` (its latest checkpoint)."""
        job_id = job_graph.job_id
        self._handle(job_lifecycle.Submit(job_id, admission.subtasks_of(job_graph), tuple(artifacts)))
        try:
            await self._start_job(job_graph, python_artifacts, recovered=snapshot, persist=False)
        except BaseException:
            self._handle(job_lifecycle.SubmissionFailed(job_id))
            raise

    def restore_archived_job(
        self,
        info: ExecutionGraphInfo,
        result: JobResult,
        graph: ArchivedExecutionGraph | None,
        checkpoint_statistics: dict[str, Any],
        age_s: float,
    ) -> None:
        """A job that finished under an earlier leader: queryable again (not re-run)."""
        archived_at = self._clock() - max(0.0, age_s)
        self._handle(job_lifecycle.RestoreArchived(
            ArchivedJob(info, result, archived_at, graph, checkpoint_statistics)
        ))  # fmt: skip

    def is_running(self, job_id: str) -> bool:
        """The job runs here (under a JobMaster, or on its way to one)."""
        status = self.jobs.status(job_id)
        return status is not None and status is not DispatcherJobStatus.ARCHIVED

    # -- RPC -----------------------------------------------------------------------------------

    async def submit_job(self, job_graph: JobGraph) -> None:
        await self._admit(job_graph, [])
        try:
            await self._start_job(job_graph, [])
        except BaseException:
            self._handle(job_lifecycle.SubmissionFailed(job_graph.job_id))
            raise

    async def _admit(self, job_graph: JobGraph, artifacts: list[JobArtifact]) -> None:
        """Admission control (:mod:`~flott.runtime.dispatcher.admission`): the graph's own bounds
        and validation off the event loop (their cost grows with the graph), then the cluster's
        limits; a refused job touches nothing. On success the job id is claimed (a duplicate is
        refused from here on) and the job's subtasks count as running."""
        def check() -> None:
            admission.check_graph_size(job_graph, self._limits)
            job_graph.validate()
            for key in STORAGE_PATH_JOB_KEYS:
                if job_graph.config.get(key, "").strip():
                    self._storage_policy.check(job_graph.config[key], key)
            if job_graph.savepoint_path:
                self._storage_policy.check(job_graph.savepoint_path, "savepoint path")

        await asyncio.to_thread(check)
        self._check_not_submitted(job_graph.job_id)
        capacity = await self._rm.request_slot_capacity()
        admission.check_cluster_limits(job_graph, self._limits, self.jobs.active_subtasks(), capacity)
        # No await between the last check and the claim: two submissions of one id cannot both win.
        subtasks = admission.subtasks_of(job_graph)
        self._handle(job_lifecycle.Submit(job_graph.job_id, subtasks, tuple(artifacts)))

    def _check_not_submitted(self, job_id: str) -> None:
        self.jobs.handle(job_lifecycle.Expire(), self._clock())
        if self.jobs.knows(job_id):
            raise DuplicateJobSubmissionError(f"job {job_id} has already been submitted")

    async def _start_job(
        self,
        job_graph: JobGraph,
        python_artifacts: list[PythonArtifactDescriptor],
        recovered: SnapshotToRestore | None = None,
        persist: bool = True,
    ) -> None:
        """Initialize a claimed job (the core has it SUBMITTED, or ARCHIVED with a rescale
        pending) and run it under a JobMaster. ``recovered``: the checkpoint a job recovered by a
        new leader starts from; ``persist``: False for a job that is already in the JobGraphStore
        (HA recovery). Raises if the job cannot start; the caller reports SubmissionFailed."""
        job_id = job_graph.job_id
        if self.jobs.status(job_id) is DispatcherJobStatus.SUBMITTED:
            self._handle(job_lifecycle.InitializationStarted(job_id))
        else:
            self._handle(job_lifecycle.RescaleRestart(job_id, admission.subtasks_of(job_graph)))
        loop = asyncio.get_running_loop()
        result: asyncio.Future[JobResult] = loop.create_future()

        def on_terminal(res: JobResult, info: ExecutionGraphInfo) -> None:
            close_job_metrics(self.metric_registry, job_id)
            archived = ArchivedJob(info, res, self._clock(), archive_execution_graph(jm, self._te_endpoints))
            if jm.checkpointing is not None:
                archived.checkpoint_statistics = jm.checkpointing.coordinator.checkpoint_statistics()
            if not result.done():
                result.set_result(res)
            if self.runners.get(job_id) is runner:
                self._handle(job_lifecycle.JobReachedTerminalState(job_id, archived))

        # A missing or corrupt savepoint, or one whose state does not fit the job, refuses the job.
        initial = recovered
        if initial is None:
            initial = await asyncio.to_thread(savepoints.savepoint_to_restore, self._storage, job_graph)
        ha_options: dict[str, Any] = {}
        if self._ha is not None:
            if persist:  # stored before the submission is acknowledged
                job = self.jobs.get(job_id)
                artifacts = job.artifacts if job is not None else []
                await self._ha.persist_job(job_graph, python_artifacts, artifacts)
            ha_options = self._ha.job_master_options(job_graph)
        job_log = await self.job_logs.open_writer(job_id)
        # The ExecutionGraph (one object per subtask) is built off the event loop that serves REST
        # and heartbeats; admission control bounds its size.
        jm = await asyncio.to_thread(
            JobMaster,
            job_graph, self._rpc, self._rm, self._config, on_terminal,
            python_artifacts=python_artifacts,
            blob_server_address=self._blob_server.address if self._blob_server is not None else "",
            initial_snapshot=initial,
            job_log=job_log,
            **ha_options,
        )
        runner = JobManagerRunner(job_graph, jm, result)
        self.runners[job_id] = runner
        self._handle(job_lifecycle.JobMasterStarted(job_id))  # a cancel asked meanwhile goes out now
        register_job_metrics(
            self.metric_registry, socket.gethostname(), job_id, job_graph.job_name, lambda: _job_values(jm)
        )
        log.info("job %s (%s) submitted", job_id, job_graph.job_name)
        await jm.start()

    async def cancel_job(self, job_id: str) -> None:
        self._handle(job_lifecycle.CancelJob(job_id))

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

    async def request_job_logs(self, job_id: str, start: int, max_lines: int) -> JobLogPage:
        """Lines of the job's own log from ``start`` (negative: from the end); its log outlives
        the job's archive entry by up to ``jobstore.expiration-time``."""
        runner = self.runners.get(job_id)
        self._handle(job_lifecycle.Expire())
        job = self.jobs.get(job_id)
        status: str | None = None
        if runner is not None:
            status = runner.job_master.graph.status.name
        elif job is not None:
            status = job.archived.result.status if job.archived is not None else "INITIALIZING"
        writer = runner.job_master.job_log if runner is not None else None
        return await self.job_logs.page(job_id, start, max_lines, status, writer)

    def _archived_overview(self) -> _ArchivedOverview:
        """The archived jobs' rows, sorted once per archive version: sorting a thousand rows was
        most of what ``GET /jobs/overview`` cost the Dispatcher."""
        version = self.jobs.archive_version
        kept = self._archived_overview_kept
        if kept is None or kept.version != version:
            rows = sorted((_overview_of(a) for a in self.jobs.archive()), key=_started, reverse=True)
            kept = _ArchivedOverview(
                version, rows, [-r.start_time for r in rows], frozenset(r.job_id for r in rows)
            )
            self._archived_overview_kept = kept
        return kept

    def _live_overview(self) -> list[JobDetails]:
        live = [r.job_master.job_details() for r in self.runners.values()]
        live.sort(key=_started, reverse=True)
        return live

    async def request_multiple_job_details(self) -> list[JobDetails]:
        """Every job's row, newest first (a stable sort: a running job before an archived one
        started in the same millisecond)."""
        self._handle(job_lifecycle.Expire())
        live = self._live_overview()
        kept = self._archived_overview()
        if kept.job_ids.isdisjoint(self.runners):
            return interleave(kept.rows, live, insertion_points(live, kept.negated_starts))
        done = [r for r in kept.rows if r.job_id not in self.runners]
        return sorted(live + done, key=_started, reverse=True)

    async def request_jobs_overview(self, known_archived_version: str) -> JobsOverviewParts:
        """The jobs overview in its two parts (see :class:`JobsOverviewParts`): the archived rows
        are left out when they are those of ``known_archived_version``."""
        self._handle(job_lifecycle.Expire())
        live = self._live_overview()
        kept = self._archived_overview()
        if not kept.job_ids.isdisjoint(self.runners):  # archived and running again: not kept
            return JobsOverviewParts(live, [r for r in kept.rows if r.job_id not in self.runners], "")
        version = f"{self._instance}:{kept.version}"
        return JobsOverviewParts(live, None if version == known_archived_version else kept.rows, version)

    async def request_cluster_overview(self) -> ClusterOverview:
        tes = await self._rm.request_task_executor_infos()
        version, finished, cancelled, failed = self._archived_counts_kept
        if version != self.jobs.archive_version:
            statuses = [a.result.status for a in self.jobs.archive()]
            finished, cancelled, failed = (statuses.count(s) for s in ("FINISHED", "CANCELED", "FAILED"))
            self._archived_counts_kept = (self.jobs.archive_version, finished, cancelled, failed)
        return ClusterOverview(
            taskmanagers=len(tes), slots_total=sum(t.num_slots for t in tes),
            slots_available=sum(t.free_slots for t in tes), jobs_running=len(self.runners),
            jobs_finished=finished, jobs_cancelled=cancelled, jobs_failed=failed,
        )

    async def request_task_executor_infos(self) -> list[TaskExecutorInfo]:
        infos = await self._rm.request_task_executor_infos()
        self._te_endpoints.update({i.resource_id: i.data_address for i in infos})
        return infos

    async def request_task_manager_log_list(self, resource_id: str) -> list[LogFileInfo]:
        return await self._rm.request_task_manager_log_list(resource_id)

    async def request_task_manager_thread_dump(self, resource_id: str) -> list[ThreadStack]:
        return await self._rm.request_task_manager_thread_dump(resource_id)

    async def request_task_manager_log_file(
        self, resource_id: str, kind: str, name: str, max_bytes: int
    ) -> bytes:
        return await self._rm.request_task_manager_log_file(resource_id, kind, name, max_bytes)

    async def shutdown_cluster(self) -> None:
        on_shutdown = self._on_shutdown
        if on_shutdown is not None:
            async def shut_down() -> None:
                await on_shutdown()

            # Answer the caller first (REST DELETE /cluster gets its 200), then go down.
            task = asyncio.get_running_loop().create_task(shut_down())
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def submit_job_with_artifacts(self, job_graph: JobGraph, artifacts: list[JobArtifact]) -> None:
        # The claim on the job id (the core's Submit, at the end of admission) comes before any
        # file is stored, so a duplicate never touches the running job's artifact records or blobs
        # (Flink A6), however long storing this job's files takes.
        await self._admit(job_graph, artifacts)
        job_id = job_graph.job_id
        stored = False
        try:
            python_artifacts = await self._store_artifacts(job_id, artifacts)
            stored = bool(python_artifacts)
            await self._start_job(job_graph, python_artifacts)
        except BaseException:
            self._handle(job_lifecycle.SubmissionFailed(job_id, files_stored=stored))
            raise

    async def _store_artifacts(
        self, job_id: str, artifacts: list[JobArtifact]
    ) -> list[PythonArtifactDescriptor]:
        """Put the job's Python files into the BlobServer; their keys, in submission order.

        Jars are recorded but not shipped (flott runs no JVM code).
        """
        python = [a for a in artifacts if a.kind == "artifact"]
        if not python:
            return []
        if self._blob_server is None:
            log.warning("job %s: no BlobServer, its %d Python file(s) are not shipped", job_id, len(python))
            return []
        server = self._blob_server

        def store() -> list[PythonArtifactDescriptor]:
            out = []
            for a in python:
                path = Path(a.path)
                if not path.is_file():
                    raise JobArtifactError(f"the job's file {a.entry_name!r} is not at {a.path}")
                key = server.put_file(job_id, path, expected_sha256=a.sha256 or None)
                out.append(PythonArtifactDescriptor(a.entry_name, key, artifact_kind(a.entry_name), a.size))
            return out

        try:
            return await asyncio.to_thread(store)
        except BaseException:
            await asyncio.to_thread(server.cleanup_job, job_id)
            raise

    # -- savepoints and checkpoints (asynchronous operations) ----------------------------------

    def _runner(self, job_id: str) -> JobManagerRunner:
        """The job's runner; JobNotFoundError, JobAlreadyTerminalError or JobInitializingError if
        it has no JobMaster."""
        self.jobs.require_job_master(job_id)
        return self.runners[job_id]

    def _job_master(self, job_id: str) -> JobMaster:
        return self._runner(job_id).job_master

    def _check_target(self, target_directory: str | None) -> None:
        if target_directory is not None:
            self._storage_policy.check(target_directory, "target-directory")

    def _savepoint_written(self, path: str) -> str:
        """Record the directory a savepoint went to (disposal may delete savepoints there)."""
        if path:
            self._savepoint_locations.add(path.rstrip("/").rsplit("/", 1)[0])
        return path

    async def trigger_savepoint(
        self, job_id: str, target_directory: str | None, cancel_job: bool, trigger_id: str | None = None
    ) -> str:
        jm = self._job_master(job_id)
        self._check_target(target_directory)

        async def run() -> tuple[int | None, str]:
            return None, self._savepoint_written(await jm.trigger_savepoint(target_directory, cancel_job))

        return self._operations.trigger(job_id, trigger_id, run)

    async def stop_with_savepoint(
        self, job_id: str, target_directory: str | None, drain: bool, trigger_id: str | None = None
    ) -> str:
        jm = self._job_master(job_id)
        self._check_target(target_directory)

        async def run() -> tuple[int | None, str]:
            return None, self._savepoint_written(await jm.stop_with_savepoint(target_directory, drain))

        return self._operations.trigger(job_id, trigger_id, run)

    async def trigger_checkpoint(self, job_id: str, trigger_id: str | None = None) -> str:
        jm = self._job_master(job_id)

        async def run() -> tuple[int | None, str]:
            return await jm.trigger_checkpoint(), ""

        return self._operations.trigger(job_id, trigger_id, run)

    async def rescale_job(self, job_id: str, parallelism: int, trigger_id: str | None = None) -> str:
        """Checked before the job is touched: the parallelism against the job's max parallelism,
        the rescaled job against the cluster's limits and (a cluster that cannot grow) against the
        slots it could get: the free ones plus those the job gives back."""
        runner = self._runner(job_id)
        jm = runner.job_master
        admission.check_rescale(runner.job_graph, parallelism)
        rescaled = savepoints.rescaled_job_graph(runner.job_graph, parallelism, "")
        capacity = await self._rm.request_slot_capacity()
        admission.check_cluster_limits(
            rescaled, self._limits, self.jobs.active_subtasks(without=job_id), capacity,
            slots_released=len(jm.graph.slots),
        )
        self._runner(job_id)  # still running after the await

        history = self._rescale_history(job_id)

        async def run() -> tuple[int | None, str]:
            self._handle(job_lifecycle.RescaleRequested(job_id))
            rescale = history.begin(runner.job_graph, parallelism, now_ms())
            try:
                try:
                    path = self._savepoint_written(await jm.stop_with_savepoint(None, drain=False))
                except BaseException:
                    self._handle(job_lifecycle.RescaleAborted(job_id))
                    raise
                result = await runner.result
                if result.status != "FINISHED":
                    history.end(rescale, "FAILED", f"JOB_{result.status}", now_ms())
                    raise JobAlreadyTerminalError(f"job {job_id} ended {result.status} while rescaling")
                history.enter(rescale, "Restarting", now_ms())
                graph = savepoints.rescaled_job_graph(runner.job_graph, parallelism, path)
                try:
                    await self._start_job(graph, jm.python_artifacts)
                except BaseException:
                    self._handle(job_lifecycle.SubmissionFailed(job_id))
                    raise
            except BaseException as e:
                history.end(rescale, "FAILED", "EXCEPTION_OCCURRED", now_ms(), f"{type(e).__name__}: {e}")
                raise
            history.end(rescale, "COMPLETED", "SUCCEEDED", now_ms())
            return None, path

        return self._operations.trigger(job_id, trigger_id, run)

    def _rescale_history(self, job_id: str) -> RescaleHistory:
        history = self._rescales.get(job_id)
        if history is None:
            for known in [j for j in self._rescales if not self.jobs.knows(j)]:
                del self._rescales[known]  # the job expired from the archive
            history = self._rescales[job_id] = RescaleHistory(self._config.get_int(HISTORY_SIZE_KEY, 0))
        return history

    async def request_job_rescales(self, job_id: str) -> JobRescales:
        """The job's rescales (an empty history if it never was rescaled); JobNotFoundError if unknown."""
        self._require_known(job_id)
        history = self._rescales.get(job_id)
        return (history or RescaleHistory(self._config.get_int(HISTORY_SIZE_KEY, 0))).snapshot()

    async def get_job_operation_status(self, job_id: str, trigger_id: str) -> OperationStatus:
        self._require_known(job_id)
        return self._operation_status(job_id, trigger_id)

    def _operation_status(self, scope: str, trigger_id: str) -> OperationStatus:
        result = self._operations.get(scope, trigger_id)  # OperationNotFoundError: 404
        if not result.done:
            return OperationStatus("IN_PROGRESS")
        if result.failure is not None:
            return OperationStatus("COMPLETED", failure=error_to_wire(result.failure))
        assert result.value is not None
        checkpoint_id, location = result.value
        return OperationStatus("COMPLETED", location=location or None, checkpoint_id=checkpoint_id)

    async def dispose_savepoint(self, savepoint_path: str, trigger_id: str | None = None) -> str:
        self._storage_policy.check(savepoint_path, "savepoint-path")  # refused before any I/O: 400

        async def run() -> tuple[int | None, str]:
            await asyncio.to_thread(
                savepoints.dispose_savepoint, self._storage, savepoint_path, self._storage_policy,
                list(self._savepoint_locations),
            )
            return None, ""

        return self._operations.trigger("", trigger_id, run)

    async def get_disposal_status(self, trigger_id: str) -> OperationStatus:
        return self._operation_status("", trigger_id)

    async def request_task_manager_thread_samples(
        self, resource_id: str, job_id: str, vertex_id: str, subtasks: list[int],
        num_samples: int, delay_ms: int, max_depth: int,
    ) -> list[StackSample]:
        budget = num_samples * delay_ms / 1000.0 + 15.0
        return await self._rm.request_task_manager_thread_samples(
            resource_id, job_id, vertex_id, subtasks, num_samples, delay_ms, max_depth, timeout=budget
        )

    async def request_metric_dumps(self) -> ClusterMetricDump:
        """The JobManager's metrics and every TaskManager's (the REST MetricFetcher's one call)."""
        timeout = min(self._config.get_seconds("pekko.ask.timeout"), _METRIC_DUMP_TIMEOUT_S)
        await self._cluster_gauges.refresh()
        try:
            taskmanagers = await self._rm.request_task_manager_metric_dumps(timeout, timeout=timeout + 1)
        except FlottError as e:
            log.debug("TaskManager metrics unavailable: %s", e)
            taskmanagers = {}
        return ClusterMetricDump(dump_registry(self.metric_registry), taskmanagers)

    async def request_checkpoint_statistics(self, job_id: str) -> dict[str, Any]:
        runner = self.runners.get(job_id)
        if runner is not None:
            return await runner.job_master.request_checkpoint_statistics()
        archived = self._archived(job_id)
        return archived.checkpoint_statistics

    async def deliver_coordination_request(self, job_id: str, operator_id: str, request: bytes) -> bytes:
        runner = self.runners.get(job_id)
        if runner is None:
            self._archived(job_id)
            raise JobAlreadyTerminalError(f"Job {job_id} is not running; its operators cannot be reached.")
        return await runner.job_master.deliver_coordination_request(operator_id, request)

    async def request_checkpoint_config(self, job_id: str) -> dict[str, Any]:
        runner = self.runners.get(job_id)
        if runner is None:
            self._archived(job_id)
            raise JobAlreadyTerminalError(f"job {job_id} is not running; its checkpoint config is gone")
        return runner.job_master.checkpoint_config_info()

    async def request_blob_server_port(self) -> int:
        """The port TaskExecutors fetch job files from (Flink: DispatcherGateway#getBlobServerPort)."""
        if self._blob_server is None:
            raise JobArtifactError("this cluster runs no BlobServer")
        return self._blob_server.port

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def request_job_artifacts(self, job_id: str) -> list[JobArtifact]:
        self._require_known(job_id)
        job = self.jobs.get(job_id)
        return list(job.artifacts) if job is not None else []

    async def request_execution_graph(self, job_id: str) -> ArchivedExecutionGraph:
        if job_id in self.runners:
            with contextlib.suppress(FlottError):
                await self.request_task_executor_infos()
        runner = self.runners.get(job_id)
        if runner is not None:
            return archive_execution_graph(runner.job_master, self._te_endpoints)
        archived = self._archived(job_id)
        if archived.graph is None:
            raise JobNotFoundError(f"job {job_id} has no archived execution graph")
        return _with_endpoints(archived.graph, self._te_endpoints)

    async def report_job_client_heartbeat(self, job_id: str, expired_timestamp: int) -> None:
        self._require_known(job_id)
        self._handle(job_lifecycle.ClientHeartbeat(job_id, expired_timestamp))

    # -- archive -------------------------------------------------------------------------------

    def _require_known(self, job_id: str) -> None:
        """JobNotFoundError unless the job runs under a JobMaster or is archived."""
        if job_id not in self.runners:
            self._archived(job_id)

    def _archived(self, job_id: str) -> ArchivedJob:
        self._handle(job_lifecycle.Expire())
        return self.jobs.archived(job_id)


def _record_of(archived: ArchivedJob) -> ArchivedJobRecord:
    """What HA stores of a globally terminal job (``<storageDir>/job-archive``)."""
    return ArchivedJobRecord(
        archived.info,
        archived.result,
        archived.graph,
        archived.checkpoint_statistics,
        int(time.time() * 1000),
    )


__all__ = ["Dispatcher", "JobManagerRunner", "job_details", "now_ms"]
