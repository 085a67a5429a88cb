"""The Dispatcher of an application (per-job) cluster (Flink: MiniDispatcher).

It accepts exactly one job, the one the application's program submits, and refuses any
other with a clear error. When that job is globally terminal it completes
:attr:`MiniDispatcher.shutdown_future` with the application's status, which the
entrypoint turns into the cluster's shutdown and the process's exit code:

* ``DETACHED``: at once (nobody waits for the result);
* ``NORMAL`` (attached): once a client fetched the job's result (``request_job_result``
  answered with the result, e.g. ``GET /jobs/:id/execution-result``), or when nobody
  did within ``result_timeout_s`` after the job ended;
* a job cancelled on request ends the cluster at once in either mode, as in Flink.

:class:`ApplicationStatus` carries Flink's process exit codes (SUCCEEDED 0, FAILED 1443,
CANCELED 0, UNKNOWN 1445); a process exit status is taken modulo 256 by the OS, so a
shell sees 163 and 165 for the last two, as it does for Flink's JVM.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Awaitable, Callable

from flott.configuration import Configuration
from flott.errors import DuplicateJobSubmissionError
from flott.runtime.blob.blob_server import BlobServer
from flott.runtime.dispatcher import job_lifecycle
from flott.runtime.dispatcher.dispatcher import Dispatcher
from flott.runtime.dispatcher.job_lifecycle import RecordJobResult
from flott.runtime.gateways.resource_manager_gateway import ResourceManagerGateway
from flott.runtime.jobgraph import JobGraph
from flott.runtime.messages.job import JobResult
from flott.runtime.messages.job_artifacts import JobArtifact
from flott.runtime.rpc.service import RpcService

log = logging.getLogger(__name__)


class ApplicationStatus(enum.Enum):
    """How an application ended (Flink: ApplicationStatus), with its process exit code."""

    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    CANCELED = "CANCELED"
    UNKNOWN = "UNKNOWN"

    @property
    def process_exit_code(self) -> int:
        return _EXIT_CODES[self]

    @staticmethod
    def from_job_status(status: str) -> ApplicationStatus:
        """Only globally terminal job states have an application status; anything else is UNKNOWN."""
        return _FROM_JOB_STATUS.get(status, ApplicationStatus.UNKNOWN)


_EXIT_CODES = {
    ApplicationStatus.SUCCEEDED: 0,
    ApplicationStatus.FAILED: 1443,
    ApplicationStatus.CANCELED: 0,
    ApplicationStatus.UNKNOWN: 1445,
}
_FROM_JOB_STATUS = {
    "FINISHED": ApplicationStatus.SUCCEEDED,
    "FAILED": ApplicationStatus.FAILED,
    "CANCELED": ApplicationStatus.CANCELED,
}


class ExecutionMode(enum.Enum):
    """When the cluster of a finished job goes away (Flink: ClusterEntrypoint.ExecutionMode)."""

    NORMAL = "NORMAL"
    """Attached: after a client fetched the job's result (or a bounded wait for one)."""
    DETACHED = "DETACHED"
    """At once."""


class MiniDispatcher(Dispatcher):
    """A Dispatcher for one job; see the module docstring."""

    def __init__(
        self,
        rpc: RpcService,
        config: Configuration,
        resource_manager: ResourceManagerGateway,
        execution_mode: ExecutionMode,
        result_timeout_s: float = 60.0,
        on_shutdown: Callable[[], Awaitable[None]] | None = None,
        blob_server: BlobServer | None = None,
    ) -> None:
        super().__init__(rpc, config, resource_manager, on_shutdown=on_shutdown, blob_server=blob_server)
        self.execution_mode = execution_mode
        self._result_timeout_s = result_timeout_s
        self.job_id: str | None = None
        """The application's job, from its (first accepted) submission on."""
        self.job_result: JobResult | None = None
        self._job_cancelled = False
        self._result_timer: asyncio.TimerHandle | None = None
        self.shutdown_future: asyncio.Future[ApplicationStatus] = asyncio.get_running_loop().create_future()

    async def stop(self) -> None:
        if self._result_timer is not None:
            self._result_timer.cancel()
        await super().stop()

    # -- exactly one job -----------------------------------------------------------------------

    def _claim(self, job_graph: JobGraph) -> bool:
        """Reserve the cluster for this job (no await before: two concurrent submissions cannot
        both win). True if this call made the claim."""
        job_id = job_graph.job_id
        if self.job_id is not None and self.job_id != job_id:
            raise DuplicateJobSubmissionError(
                f"this application cluster runs exactly one job ({self.job_id}); job {job_id} "
                f"('{job_graph.job_name}') is refused: a program in application mode may submit one "
                f"job only"
            )
        if self.job_id is None:
            self.job_id = job_id
            return True
        return False

    def _release(self, job_id: str, claimed: bool) -> None:
        # A refused submission (bad graph, unusable savepoint ...) does not occupy the cluster.
        if claimed and not self.jobs.knows(job_id):
            self.job_id = None

    async def submit_job(self, job_graph: JobGraph) -> None:
        claimed = self._claim(job_graph)
        try:
            await super().submit_job(job_graph)
        except BaseException:
            self._release(job_graph.job_id, claimed)
            raise

    async def submit_job_with_artifacts(self, job_graph: JobGraph, artifacts: list[JobArtifact]) -> None:
        claimed = self._claim(job_graph)
        try:
            await super().submit_job_with_artifacts(job_graph, artifacts)
        except BaseException:
            self._release(job_graph.job_id, claimed)
            raise

    # -- shutting down when the job is done ----------------------------------------------------

    async def cancel_job(self, job_id: str) -> None:
        if job_id == self.job_id:
            self._job_cancelled = True
        await super().cancel_job(job_id)

    async def request_job_result(self, job_id: str, wait_s: float) -> JobResult | None:
        result = await super().request_job_result(job_id, wait_s)
        if result is not None and job_id == self.job_id and self.execution_mode is ExecutionMode.NORMAL:
            log.info("the result of job %s was fetched: shutting the application cluster down", job_id)
            self._complete(ApplicationStatus.from_job_status(result.status))
        return result

    async def shutdown_cluster(self) -> None:
        """``DELETE /cluster``: the application ends now (with its job's status if it has one)."""
        result = self.job_result
        self._complete(
            ApplicationStatus.from_job_status(result.status)
            if result is not None
            else ApplicationStatus.UNKNOWN
        )
        await super().shutdown_cluster()

    def _job_action_done(self, action: job_lifecycle.Action) -> None:
        # The core records a job's result exactly when it is globally terminal (Flink:
        # jobReachedTerminalState); a run that ends only to restart at a new parallelism is not.
        if not isinstance(action, RecordJobResult) or action.job_id != self.job_id:
            return
        result = action.archived.result
        self.job_result = result
        status = ApplicationStatus.from_job_status(result.status)
        if self._job_cancelled or self.execution_mode is ExecutionMode.DETACHED:
            log.info(
                "job %s reached %s (cancelled on request: %s, mode %s): shutting the application "
                "cluster down",
                action.job_id,
                result.status,
                self._job_cancelled,
                self.execution_mode.name,
            )
            self._complete(status)
        elif self._result_timer is None:
            self._result_timer = asyncio.get_running_loop().call_later(
                self._result_timeout_s, self._result_not_fetched, status
            )

    def _result_not_fetched(self, status: ApplicationStatus) -> None:
        log.warning(
            "nobody fetched the result of job %s within %.0f s: shutting the application cluster down",
            self.job_id,
            self._result_timeout_s,
        )
        self._complete(status)

    def _complete(self, status: ApplicationStatus) -> None:
        if not self.shutdown_future.done():
            self.shutdown_future.set_result(status)
        if self._result_timer is not None:
            self._result_timer.cancel()


__all__ = ["ApplicationStatus", "ExecutionMode", "MiniDispatcher"]
