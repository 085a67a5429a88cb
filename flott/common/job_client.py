"""JobClient: a handle on a submitted job (PyFlink's JobClient, same methods).

Methods return CompletableFutures; ``get_job_execution_result().result()``
waits for the job and raises JobExecutionError carrying the cause (for a
failed user function: its type, message and the worker's traceback).
``trigger_savepoint().result()`` and ``stop_with_savepoint(...).result()``
give the savepoint's path (a ``file:`` URL or path under the savepoint
directory), to restore from with ``flott run -s PATH``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from flott.common.completable_future import CompletableFuture
from flott.common.job_status import JobStatus
from flott.errors import FlottError, JobCancellationError, JobExecutionError, UserCodeError, error_from_wire

if TYPE_CHECKING:
    from flott.client.cluster_client import ClusterClient
    from flott.client.loop_thread import LoopThread
    from flott.runtime.messages.job import JobResult


def describe_failure(job_name: str, job_id: str, result: JobResult) -> JobExecutionError:
    cause = error_from_wire(result.failure) if result.failure is not None else None
    msg = f"Job '{job_name}' ({job_id}) failed"
    if cause is not None:
        msg += f": {cause}"
        if isinstance(cause, UserCodeError) and cause.traceback:
            msg += "\n\nTraceback on the TaskExecutor:\n" + cause.traceback.rstrip()
    return JobExecutionError(msg, cause)


class JobClient:
    def __init__(
        self,
        job_id: str,
        job_name: str,
        client: ClusterClient,
        loop: LoopThread,
        on_terminal: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._job_id = job_id
        self._job_name = job_name
        self._client = client
        self._loop = loop
        self._on_terminal = on_terminal
        self._result_future: CompletableFuture[Any] | None = None
        self._final: JobResult | None = None

    @property
    def cluster_client(self) -> ClusterClient:
        return self._client

    @property
    def loop(self) -> LoopThread:
        return self._loop

    def get_job_id(self) -> Any:
        from flott.common import JobID

        return JobID(self._job_id)

    def get_job_status(self) -> CompletableFuture[JobStatus]:
        return CompletableFuture(self._loop.submit(self._status()), JobStatus.__getitem__)

    async def _status(self) -> str:
        # An embedded cluster goes away with its job: the final result answers from then on.
        if self._final is not None:
            return self._final.status
        return await self._client.get_job_status(self._job_id)

    def cancel(self) -> CompletableFuture[None]:
        return CompletableFuture(self._loop.submit(self._cancel_and_wait()))

    async def _cancel_and_wait(self) -> None:
        if self._final is None:
            await self._client.cancel_job(self._job_id)
        await self._wait_result()

    def get_accumulators(self) -> CompletableFuture[dict[str, Any]]:
        async def empty() -> dict[str, Any]:
            return {}

        return CompletableFuture(self._loop.submit(empty()))

    async def _wait_result(self) -> JobResult:
        while self._final is None:
            try:
                result = await self._client.request_job_result(self._job_id, 1.0)
            except FlottError:
                if self._final is not None:  # another waiter got it and the cluster went away
                    break
                raise
            if result is not None:
                self._final = result
                if self._on_terminal is not None:
                    hook, self._on_terminal = self._on_terminal, None
                    await hook()
        return self._final

    def get_job_execution_result(self) -> CompletableFuture[Any]:
        if self._result_future is None:
            self._result_future = CompletableFuture(
                self._loop.submit(self._wait_result()), self._to_execution_result
            )
        return self._result_future

    def _to_execution_result(self, result: JobResult) -> Any:
        from flott.common import JobExecutionResult, JobID

        if result.status == JobStatus.FAILED.name:
            raise describe_failure(self._job_name, self._job_id, result)
        if result.status == JobStatus.CANCELED.name:
            raise JobCancellationError(f"Job '{self._job_name}' ({self._job_id}) was cancelled")
        return JobExecutionResult(JobID(self._job_id), result.net_runtime_ms, {})

    def stop_with_savepoint(
        self, advance_to_end_of_event_time: bool, savepoint_directory: str | None = None
    ) -> CompletableFuture[str]:
        """Stop the job with a savepoint; the future's result is the savepoint's path.

        The job ends FINISHED. ``advance_to_end_of_event_time`` (Flink's ``--drain``) sends
        MAX_WATERMARK and ends the input first, so all event-time timers and windows fire; use it
        only when the job is stopped for good. Without ``savepoint_directory`` the job's or the
        cluster's default savepoint directory (``execution.checkpointing.savepoint-dir``) is used.
        Waits at most ``client.timeout`` (default 60 s); a failed savepoint raises
        OperationFailedError with the cluster's cause, and the job keeps running.
        """
        return CompletableFuture(
            self._loop.submit(self._stop_with_savepoint(advance_to_end_of_event_time, savepoint_directory))
        )

    async def _stop_with_savepoint(self, drain: bool, savepoint_directory: str | None) -> str:
        import asyncio

        path = await self._client.stop_with_savepoint(self._job_id, drain, savepoint_directory)
        # The job is ending FINISHED: fetch its result (not cancelled if slow), so an embedded
        # cluster shuts down with the job, as after cancel().
        result = asyncio.ensure_future(self._wait_result())
        result.add_done_callback(lambda t: t.cancelled() or t.exception())
        await asyncio.wait({result}, timeout=30.0)
        return path

    def trigger_savepoint(self, savepoint_directory: str | None = None) -> CompletableFuture[str]:
        """Take a savepoint of the running job; the future's result is the savepoint's path.

        Without ``savepoint_directory`` the job's or the cluster's default savepoint directory is
        used. Waits at most ``client.timeout`` (default 60 s).
        """
        return CompletableFuture(
            self._loop.submit(self._client.trigger_savepoint(self._job_id, savepoint_directory))
        )
