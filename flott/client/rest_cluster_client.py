"""RestClusterClient: a ClusterClient that speaks Flink's REST API v1 to a remote cluster.

What it does the way Flink's RestClusterClient does, and why:

* **Submission** writes the JobGraph (flott's msgpack encoding) to a
  temporary ``flott-jobgraph-<jobid>*.bin`` file and uploads it as Flink's
  multipart ``POST /v1/jobs`` together with the job's *local* Python files
  (``python.files`` of the job's configuration plus any given explicitly) and
  its requirements file (``python.requirements``, with PyFlink's optional
  ``#cache_dir`` of distributions, zipped). The cluster's BlobServer ships
  them to the TaskExecutors. Remote files (``s3://``, ``hdfs://``,
  ``http://`` ...) are not uploaded; the cluster does not fetch them yet
  either (a warning says so). The temporary file is deleted whatever
  happens; every failure becomes :class:`JobSubmissionError` with the cause
  attached.
* **Retries**: every request is retried while the connection fails or the
  server answers 503 (a leader election), up to ``rest.retry.max-attempts``
  retries after the first attempt, ``rest.retry.delay`` apart. Other answers
  (404 above all) are final at once.
* A submission retried after the server may already have received it (the
  connection broke mid-request) can come back as a duplicate; if the job
  then exists on the cluster, the first attempt took effect and the
  submission counts as done.
* **Results** are polled from ``/jobs/:id/execution-result`` with a growing
  pause (10 ms doubling to 2 s); a result with application status UNKNOWN
  (job suspended by a leader change) is not final, so polling goes on.
* **Savepoints, stop-with-savepoint, checkpoints, disposal, rescaling**
  (Flink's triggerSavepoint, cancelWithSavepoint, stopWithSavepoint,
  triggerCheckpoint, disposeSavepoint, rescaleJob) trigger, then poll the
  status URL the same way, at most ``client.timeout`` (default 60 s). The
  trigger id is chosen here, so a retried trigger cannot start a second
  savepoint. A failed operation raises
  :class:`~flott.client.cluster_client.OperationFailedError` with the
  cluster's error as ``cause``; ``*_detached_*`` variants return the trigger id.

**Authentication** (REST auth on, :mod:`flott.rest.authentication`): every request carries
``Authorization: Bearer <token>``, the token given to the constructor, else ``$FLOTT_REST_TOKEN``,
else ``flott.rest.client.token`` (and the headers of Flink's ``$FLINK_REST_CLIENT_HEADERS``); it
follows the leader when the client does. A 401 or 403 is an
:class:`~flott.errors.AuthenticationError` / :class:`~flott.errors.AuthorizationError` whose one
line says what to do. Client and server token keys are taken out of a job's configuration before
it is uploaded, so no token travels to the TaskExecutors with a job.

Errors come back as flott's error classes: the server writes
``"<ClassName>: <message>"``, which is mapped back through the error tree; a
job failure's cause is rebuilt exactly from ``failure-cause``.

All methods are async and bind to the event loop of their first call (the
aiohttp session). Synchronous callers (the CLI) run them on
:func:`flott.client.loop_thread.shared_loop_thread`; :class:`RestExecutor` is
the PipelineExecutor that does so for ``env.execute()``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import inspect
import io
import json
import logging
import os
import secrets
import shutil
import ssl
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

import aiohttp
import msgspec

from flott.client.cluster_client import operation_timeout_s, wait_for_operation
from flott.client.loop_thread import LoopThread, shared_loop_thread
from flott.common.job_client import JobClient
from flott.configuration import Configuration
from flott.errors import (
    AuthenticationError,
    AuthorizationError,
    ClusterError,
    FlottError,
    JobError,
    JobSubmissionError,
    LeadershipLostError,
    NotYetSupportedError,
    PayloadTooLargeError,
    RestRequestError,
    RpcConnectionError,
    RpcTimeoutError,
    TlsHandshakeError,
    UserCodeError,
    error_class_by_name,
)
from flott.rest.authentication import client_auth_message, client_headers, without_credentials
from flott.rest.errors import RestMethodNotAllowedError, RestNotFoundError
from flott.rest.messages.cluster import ClusterOverviewWithVersion, DashboardConfiguration
from flott.rest.messages.common import (
    AsynchronousOperationResult,
    CheckpointOperationResult,
    SavepointOperationResult,
    SerializedThrowable,
    TriggerResponse,
)
from flott.rest.messages.coordination import ClientCoordinationResponseBody
from flott.rest.messages.job import JobDetailsInfo, JobExecutionResultResponseBody, MultipleJobsDetails
from flott.rest.messages.taskmanager import TaskManagerInfo, TaskManagersInfo
from flott.rest.serialized_throwable import from_serialized_throwable
from flott.rest.version import FLINK_REVISION, FLOTT_VERSION, REST_API_VERSION
from flott.runtime.blob.python_artifacts import collect_local_artifacts
from flott.runtime.highavailability.rest_leader_lookup import ha_enabled, lookup_rest_leader
from flott.runtime.jobgraph import JobGraph, encode_job_graph
from flott.runtime.messages.job import (
    ExecutionGraphInfo,
    JobDetails,
    JobResult,
    OperationStatus,
    VertexDetails,
)
from flott.ssl_context import (
    closed_without_answer_hint,
    describe_verification_error,
    rest_client_ssl,
    rest_scheme,
)

T = TypeVar("T")

_STATUS_ERRORS: dict[int, type[FlottError]] = {
    400: RestRequestError,
    401: AuthenticationError,
    403: AuthorizationError,
    404: RestNotFoundError,
    405: RestMethodNotAllowedError,
    409: JobError,
    413: PayloadTooLargeError,
    501: NotYetSupportedError,
    503: LeadershipLostError,
    504: RpcTimeoutError,
}
_APPLICATION_TO_JOB_STATUS = {"SUCCEEDED": "FINISHED", "FAILED": "FAILED", "CANCELED": "CANCELED"}


class _HttpError(Exception):
    """A non-2xx answer, before it becomes a flott error (the submission path looks at it first)."""

    def __init__(self, status: int, errors: list[str], maybe_delivered: bool) -> None:
        super().__init__(f"HTTP {status}: {'; '.join(errors)}")
        self.status = status
        self.errors = errors
        self.maybe_delivered = maybe_delivered

    def to_flott_error(self) -> FlottError:
        first = self.errors[0] if self.errors else ""
        name, sep, message = first.partition(": ")
        cls = error_class_by_name(name) if sep else None
        if cls is not None and cls is not UserCodeError:
            with contextlib.suppress(TypeError):  # every class of the tree but UserCodeError takes a message
                return cls(message)
        text = "; ".join(self.errors) or f"HTTP {self.status}"
        fallback = _STATUS_ERRORS.get(self.status, ClusterError)
        if self.status in (401, 403):
            return fallback(client_auth_message(self.status, text))
        return fallback(f"{text} (HTTP {self.status})")


@dataclass(frozen=True)
class _Upload:
    entry_name: str
    file_name: str
    path: Path


log = logging.getLogger(__name__)

def _base_url(address: str, scheme: str = "http") -> str:
    address = address.strip().rstrip("/")
    if "://" not in address:
        address = f"{scheme}://{address}"
    parsed = urlparse(address)
    if not parsed.hostname:
        raise RestRequestError(f"not a REST address (host:port or http://host:port): {address!r}")
    return address


class RestClusterClient:
    """A ClusterClient for a cluster reached over REST (Flink: RestClusterClient).

    ``address`` is ``host:port`` or ``http://host:port[/prefix]``; without it,
    ``rest.address`` and ``rest.port`` of ``config`` are used. ``token`` is the bearer token for
    a cluster with REST authentication (default: ``$FLOTT_REST_TOKEN``, ``flott.rest.client.token``).
    """

    def __init__(
        self, config: Configuration | None = None, address: str | None = None, *, token: str | None = None
    ) -> None:
        self.config = config or Configuration()
        self._auth_headers = client_headers(self.config, token)
        self._follow_leader = ha_enabled(self.config)
        """With ZooKeeper HA the client asks ZooKeeper where the REST leader is, at start (when no
        address is given) and whenever the JobManager it talks to stops answering."""
        if address is None and self._follow_leader:
            address = lookup_rest_leader(self.config)
        if address is None:
            address = f"{self.config.get('rest.address')}:{self.config.get('rest.port')}"
        self.base_url = _base_url(address, rest_scheme(self.config))
        self.max_retries = max(0, self.config.get_int("rest.retry.max-attempts"))
        self.retry_delay_s = self.config.get_seconds("rest.retry.delay")
        self._timeout = aiohttp.ClientTimeout(
            total=None,
            connect=self.config.get_seconds("rest.connection-timeout", "15 s"),
            sock_read=self.config.get_seconds("rest.idleness-timeout", "5 min"),
        )
        self._session: aiohttp.ClientSession | None = None
        self._version_checked = False
        self._said_retrying = False
        self.operation_timeout_s = operation_timeout_s(self.config)
        """How long savepoints, stops, checkpoints, disposals and rescalings are waited for
        (``client.timeout``, default 60 s), unless a call gives its own ``timeout_s``."""

    # -- plumbing ------------------------------------------------------------------------------

    def _url(self, path: str) -> str:
        return f"{self.base_url}/{REST_API_VERSION}{path}"

    def _ssl(self, url: str) -> ssl.SSLContext | bool:
        """For an ``https`` URL, the context of ``security.ssl.rest.*`` (truststore, client
        certificate); aiohttp's default otherwise."""
        return rest_client_ssl(self.config) if url.startswith("https:") else True

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=self._timeout)
        return self._session

    async def _send(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        form: Callable[[list[io.BufferedReader]], aiohttp.FormData] | None = None,
        params: dict[str, str] | None = None,
    ) -> bytes:
        """One REST call with Flink's retry policy; the 2xx body, or _HttpError / a connection error."""
        url = self._url(path)
        attempts = self.max_retries + 1
        maybe_delivered = False
        last: BaseException | None = None
        for attempt in range(attempts):
            opened: list[io.BufferedReader] = []
            try:
                data: Any = None
                headers: dict[str, str] = dict(self._auth_headers)
                if form is not None:
                    data = form(opened)
                elif json_body is not None:
                    data = msgspec.json.encode(json_body)
                    headers["Content-Type"] = "application/json"
                async with self._get_session().request(
                    method, url, data=data, params=params, headers=headers, ssl=self._ssl(url)
                ) as resp:
                    payload = await resp.read()
                    if 200 <= resp.status < 300:
                        return payload
                    error = _HttpError(resp.status, _error_strings(payload), maybe_delivered)
                    if resp.status != 503:
                        raise error
                    last = error
            except aiohttp.ClientSSLError as e:  # a certificate problem: retrying cannot help
                cause = getattr(e, "certificate_error", None) or e.os_error
                raise TlsHandshakeError(describe_verification_error(cause, self.base_url)) from None
            except aiohttp.ClientConnectorError as e:
                last = RpcConnectionError(f"cannot connect to the REST endpoint at {self.base_url}: {e}")
                self._say_retrying(last, attempts - attempt - 1)
            except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TimeoutError) as e:
                maybe_delivered = True  # the request may have reached the server before this broke
                closed = isinstance(e, aiohttp.ServerDisconnectedError | aiohttp.ClientOSError)
                hint = closed_without_answer_hint(url) if closed else ""
                last = RpcConnectionError(
                    f"connection to the REST endpoint at {self.base_url} failed during {method} {path}: "
                    f"{e or type(e).__name__}{hint}"
                )
            finally:
                for f in opened:
                    f.close()
            if attempt + 1 < attempts:
                await asyncio.sleep(self.retry_delay_s)
                if self._follow_leader:
                    await self._follow_the_leader()
                    url = self._url(path)
        assert last is not None
        raise last

    def _say_retrying(self, error: RpcConnectionError, retries_left: int) -> None:
        """Say at once, and once per client, that the cluster does not answer and how long the
        client goes on trying (Flink's rest.retry.* keep it silent for up to a minute)."""
        if self._said_retrying or retries_left <= 0:
            return
        self._said_retrying = True
        log.warning(
            "%s; retrying %d more time(s), %g s apart (rest.retry.max-attempts, rest.retry.delay)",
            error,
            retries_left,
            self.retry_delay_s,
        )

    async def _follow_the_leader(self) -> None:
        leader = await asyncio.to_thread(lookup_rest_leader, self.config)
        scheme = rest_scheme(self.config)
        if leader is not None and _base_url(leader, scheme) != self.base_url:
            log.info("the REST leader moved from %s to %s", self.base_url, leader)
            self.base_url = _base_url(leader, scheme)

    async def _call(self, method: str, path: str, tp: type[T], **kwargs: Any) -> T:
        """``_send`` decoding the answer as ``tp``; HTTP errors as flott errors."""
        try:
            payload = await self._send(method, path, **kwargs)
        except _HttpError as e:
            raise e.to_flott_error() from None
        try:
            return msgspec.json.decode(payload or b"{}", type=tp)
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            raise ClusterError(f"unexpected answer to {method} {path} from {self.base_url}: {e}") from None

    # -- ClusterClient -------------------------------------------------------------------------

    async def submit_job(self, job_graph: JobGraph, artifacts: Sequence[str | os.PathLike[str]] = ()) -> str:
        """Upload and submit ``job_graph``; its local Python files go with it. Returns the job id."""
        job_id = job_graph.job_id
        fd, graph_name = tempfile.mkstemp(prefix=f"flott-jobgraph-{job_id}", suffix=".bin")
        graph_path = Path(graph_name)
        scratch = Path(tempfile.mkdtemp(prefix="flott-submit-"))
        try:
            if not self._version_checked:
                await self.check_rest_api_version()
                self._version_checked = True
            with os.fdopen(fd, "wb") as f:
                f.write(encode_job_graph(without_credentials(job_graph)))
            uploads = self._collect_uploads(job_graph, [os.fspath(a) for a in artifacts], scratch)
            request = {
                "jobGraphFileName": graph_path.name,
                "jobJarFileNames": [],
                "jobArtifactFileNames": [
                    {"entryName": u.entry_name, "fileName": u.file_name} for u in uploads
                ],
            }

            def form(opened: list[io.BufferedReader]) -> aiohttp.FormData:
                data = aiohttp.FormData()
                data.add_field("request", json.dumps(request), content_type="application/json")
                for i, (name, path) in enumerate(
                    [(graph_path.name, graph_path), *((u.file_name, u.path) for u in uploads)]
                ):
                    handle = path.open("rb")
                    opened.append(handle)
                    data.add_field(
                        f"file_{i}", handle, filename=name, content_type="application/octet-stream"
                    )
                return data

            try:
                await self._send("POST", "/jobs", form=form)
            except _HttpError as e:
                if e.status == 409 and e.maybe_delivered and await self._exists(job_id):
                    return job_id  # an earlier attempt went through before the connection broke
                raise e.to_flott_error() from None
        except JobSubmissionError:
            raise
        except FlottError as e:
            raise JobSubmissionError(
                f"Failed to submit job '{job_graph.job_name}' ({job_id}) to {self.base_url}: {e}", e
            ) from e
        finally:
            _remove(graph_path, scratch)
        return job_id

    def _collect_uploads(self, job_graph: JobGraph, extra: list[str], scratch: Path) -> list[_Upload]:
        """Local files to upload: ``python.files`` of the job plus ``extra``, and ``python.requirements``.

        Directories are zipped into ``scratch``; what each file becomes on the
        TaskExecutors is decided by :mod:`flott.runtime.blob.python_artifacts`.
        """
        local = collect_local_artifacts(job_graph.config, extra, scratch)
        return [_Upload(a.entry_name, f"artifact_{i}_{a.entry_name}", a.path) for i, a in enumerate(local)]

    async def _exists(self, job_id: str) -> bool:
        try:
            await self.get_job_status(job_id)
        except FlottError:
            return False
        return True

    async def cancel_job(self, job_id: str) -> None:
        await self._call("PATCH", f"/jobs/{job_id}", dict, params={"mode": "cancel"})

    async def get_job_status(self, job_id: str) -> str:
        body = await self._call("GET", f"/jobs/{job_id}/status", dict)
        return str(body["status"])

    async def request_job(self, job_id: str) -> ExecutionGraphInfo:
        d = await self.get_job_details(job_id)
        return ExecutionGraphInfo(
            job_id=d.jid,
            job_name=d.name,
            status=d.state,
            start_time=d.start_time,
            end_time=d.end_time,
            duration=d.duration,
            now=d.now,
            timestamps={k: v for k, v in d.timestamps.items() if v > 0},
            vertices=[
                VertexDetails(
                    id=v.id,
                    name=v.name,
                    parallelism=v.parallelism,
                    max_parallelism=v.max_parallelism,
                    status=v.status,
                    start_time=v.start_time,
                    end_time=v.end_time,
                    duration=v.duration,
                    task_counts=dict(v.tasks),
                    records_in=v.metrics.read_records,
                    records_out=v.metrics.write_records,
                )
                for v in d.vertices
            ],
            max_parallelism=d.max_parallelism,
            job_type=d.job_type,
        )

    async def request_job_result(self, job_id: str, wait_s: float) -> JobResult | None:
        """The job's result once it is globally terminal; None if it is not after ``wait_s`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        pause = 0.01
        while True:
            body = await self._call("GET", f"/jobs/{job_id}/execution-result", JobExecutionResultResponseBody)
            r = body.job_execution_result
            if body.status.id == "COMPLETED" and r is not None and r.application_status != "UNKNOWN":
                return JobResult(
                    job_id=r.id,
                    status=_APPLICATION_TO_JOB_STATUS[r.application_status],
                    net_runtime_ms=r.net_runtime,
                    failure=from_serialized_throwable(r.failure_cause)
                    if r.failure_cause is not None
                    else None,
                    accumulator_results={
                        name: base64.b64decode(value)
                        for name, value in r.accumulator_results.items()
                        if isinstance(value, str)
                    },
                )
            remaining = deadline - loop.time()
            if remaining <= 0:
                return None
            await asyncio.sleep(min(pause, remaining))
            pause = min(pause * 2, 2.0)

    async def send_coordination_request(self, job_id: str, operator_id: str, request: bytes) -> bytes:
        """Flink's sendCoordinationRequest: opaque bytes to an operator of a running job, its answer."""
        body = {"serializedCoordinationRequest": base64.b64encode(request).decode("ascii")}
        path = f"/jobs/{job_id}/coordinators/{operator_id}"
        answer = await self._call("POST", path, ClientCoordinationResponseBody, json_body=body)
        return answer.serialized_coordination_result

    async def wait_for_job_result(self, job_id: str, timeout_s: float | None = None) -> JobResult:
        """Poll until the job is globally terminal (Flink: requestJobResult).

        Raises RpcTimeoutError if it is not after ``timeout_s`` seconds.
        """
        result = await self.request_job_result(job_id, float("inf") if timeout_s is None else timeout_s)
        if result is None:
            raise RpcTimeoutError(f"job {job_id} did not finish within {timeout_s:.1f}s")
        return result

    async def list_jobs(self) -> list[JobDetails]:
        body = await self._call("GET", "/jobs/overview", MultipleJobsDetails)
        return [
            JobDetails(
                job_id=j.jid,
                job_name=j.name,
                status=j.state,
                start_time=j.start_time,
                end_time=j.end_time,
                duration=j.duration,
                last_modification=j.last_modification,
                task_counts={k.upper(): v for k, v in j.tasks.items() if k != "total"},
                num_tasks=j.tasks.get("total", 0),
            )
            for j in body.jobs
        ]

    # -- savepoints, stop-with-savepoint, checkpoints, disposal, rescaling ------------------------
    #
    # Each operation is Flink's trigger-then-poll: the trigger answers a request id, the status URL
    # is polled until COMPLETED (wait_for_operation). Savepoint, stop and checkpoint triggers carry a
    # trigger id chosen here, so a trigger retried after a broken connection or a 503 cannot start a
    # second operation. Without a directory, the job's or the cluster's default savepoint directory
    # is used (a 400 if neither is configured).

    def _wait_s(self, timeout_s: float | None) -> float:
        return self.operation_timeout_s if timeout_s is None else timeout_s

    async def _trigger(self, method: str, path: str, body: Any = None, **kwargs: Any) -> str:
        answer = await self._call(method, path, TriggerResponse, json_body=body, **kwargs)
        return answer.request_id

    async def trigger_detached_savepoint(
        self, job_id: str, savepoint_directory: str | None = None, format_type: str = "CANONICAL"
    ) -> str:
        """Trigger a savepoint and return its trigger id without waiting (Flink: triggerDetachedSavepoint)."""
        return await self._trigger_savepoint(job_id, savepoint_directory, False, format_type)

    async def _trigger_savepoint(
        self, job_id: str, savepoint_directory: str | None, cancel_job: bool, format_type: str
    ) -> str:
        body = {
            "target-directory": savepoint_directory,
            "cancel-job": cancel_job,
            "formatType": format_type,
            "triggerId": secrets.token_hex(16),
        }
        return await self._trigger("POST", f"/jobs/{job_id}/savepoints", body)

    async def trigger_savepoint(
        self,
        job_id: str,
        savepoint_directory: str | None = None,
        format_type: str = "CANONICAL",
        *,
        timeout_s: float | None = None,
    ) -> str:
        """Take a savepoint of the running job and wait for it; returns its path (Flink: triggerSavepoint)."""
        trigger_id = await self._trigger_savepoint(job_id, savepoint_directory, False, format_type)
        return await self._wait_savepoint(job_id, trigger_id, f"Savepoint of job {job_id}", timeout_s)

    async def cancel_with_savepoint(
        self,
        job_id: str,
        savepoint_directory: str | None = None,
        format_type: str = "CANONICAL",
        *,
        timeout_s: float | None = None,
    ) -> str:
        """Take a savepoint, then cancel the job (it ends CANCELED); the savepoint's path.

        Deprecated in Flink in favour of :meth:`stop_with_savepoint` (Flink: cancelWithSavepoint).
        """
        trigger_id = await self._trigger_savepoint(job_id, savepoint_directory, True, format_type)
        what = f"Cancel-with-savepoint of job {job_id}"
        return await self._wait_savepoint(job_id, trigger_id, what, timeout_s)

    async def stop_with_detached_savepoint(
        self,
        job_id: str,
        advance_to_end_of_event_time: bool = False,
        savepoint_directory: str | None = None,
        format_type: str = "CANONICAL",
    ) -> str:
        """Trigger stop-with-savepoint and return its trigger id without waiting
        (Flink: stopWithDetachedSavepoint); poll it with :meth:`get_savepoint_status`."""
        body = {
            "targetDirectory": savepoint_directory,
            "drain": advance_to_end_of_event_time,
            "formatType": format_type,
            "triggerId": secrets.token_hex(16),
        }
        return await self._trigger("POST", f"/jobs/{job_id}/stop", body)

    async def stop_with_savepoint(
        self,
        job_id: str,
        advance_to_end_of_event_time: bool = False,
        savepoint_directory: str | None = None,
        format_type: str = "CANONICAL",
        *,
        timeout_s: float | None = None,
    ) -> str:
        """Stop the job with a savepoint and wait for it; the job ends FINISHED. Returns the path.

        ``advance_to_end_of_event_time`` (``--drain``) sends MAX_WATERMARK and ends the input first,
        so every event-time timer and window fires (Flink: stopWithSavepoint).
        """
        trigger_id = await self.stop_with_detached_savepoint(
            job_id, advance_to_end_of_event_time, savepoint_directory, format_type
        )
        what = f"Stop-with-savepoint of job {job_id}"
        return await self._wait_savepoint(job_id, trigger_id, what, timeout_s)

    async def _wait_savepoint(self, job_id: str, trigger_id: str, what: str, timeout_s: float | None) -> str:
        status = await wait_for_operation(
            lambda: self.get_savepoint_status(job_id, trigger_id), what, self._wait_s(timeout_s), trigger_id
        )
        return status.location or ""

    async def get_savepoint_status(self, job_id: str, trigger_id: str) -> OperationStatus:
        """``GET /jobs/:id/savepoints/:triggerid`` (savepoints and stop-with-savepoint)."""
        body = await self._call("GET", f"/jobs/{job_id}/savepoints/{trigger_id}", SavepointOperationResult)
        op = body.operation
        return _operation_status(
            body.status.id, op.failure_cause if op else None, location=op.location if op else None
        )

    async def trigger_checkpoint(
        self, job_id: str, checkpoint_type: str = "CONFIGURED", *, timeout_s: float | None = None
    ) -> int:
        """Take a checkpoint now and wait for it; returns its id (Flink: triggerCheckpoint).

        ``checkpoint_type`` is CONFIGURED or FULL (flott's checkpoints are always full).
        """
        body = {"checkpointType": checkpoint_type, "triggerId": secrets.token_hex(16)}
        trigger_id = await self._trigger("POST", f"/jobs/{job_id}/checkpoints", body)
        status = await wait_for_operation(
            lambda: self.get_checkpoint_status(job_id, trigger_id),
            f"Checkpoint of job {job_id}",
            self._wait_s(timeout_s),
            trigger_id,
        )
        return status.checkpoint_id if status.checkpoint_id is not None else -1

    async def get_checkpoint_status(self, job_id: str, trigger_id: str) -> OperationStatus:
        body = await self._call("GET", f"/jobs/{job_id}/checkpoints/{trigger_id}", CheckpointOperationResult)
        op = body.operation
        return _operation_status(
            body.status.id, op.failure_cause if op else None, checkpoint_id=op.checkpoint_id if op else None
        )

    async def dispose_savepoint(self, savepoint_path: str, *, timeout_s: float | None = None) -> None:
        """Delete a savepoint's metadata and state files; no job needs to run (Flink: disposeSavepoint)."""
        trigger_id = await self._trigger("POST", "/savepoint-disposal", {"savepoint-path": savepoint_path})
        await wait_for_operation(
            lambda: self.get_disposal_status(trigger_id),
            f"Disposal of savepoint {savepoint_path}",
            self._wait_s(timeout_s),
            trigger_id,
        )

    async def get_disposal_status(self, trigger_id: str) -> OperationStatus:
        body = await self._call("GET", f"/savepoint-disposal/{trigger_id}", AsynchronousOperationResult)
        return _operation_status(body.status.id, body.operation.failure_cause if body.operation else None)

    async def rescale_job(self, job_id: str, parallelism: int, *, timeout_s: float | None = None) -> None:
        """Run the job at ``parallelism``: a savepoint, then a restart from it, and wait for both
        (Flink 1.x: rescaleJob; Flink itself disabled it, flott serves it)."""
        trigger_id = await self._trigger(
            "PATCH", f"/jobs/{job_id}/rescaling", params={"parallelism": str(parallelism)}
        )
        await wait_for_operation(
            lambda: self.get_rescaling_status(job_id, trigger_id),
            f"Rescaling job {job_id} to parallelism {parallelism}",
            self._wait_s(timeout_s),
            trigger_id,
        )

    async def get_rescaling_status(self, job_id: str, trigger_id: str) -> OperationStatus:
        body = await self._call("GET", f"/jobs/{job_id}/rescaling/{trigger_id}", AsynchronousOperationResult)
        return _operation_status(body.status.id, body.operation.failure_cause if body.operation else None)

    async def get_checkpoint_statistics(self, job_id: str) -> dict[str, Any]:
        """``GET /jobs/:id/checkpoints``: counts, summary, latest and history, in Flink's JSON shape."""
        return await self._call("GET", f"/jobs/{job_id}/checkpoints", dict)

    async def get_checkpoint_config(self, job_id: str) -> dict[str, Any]:
        """``GET /jobs/:id/checkpoints/config`` in Flink's JSON shape."""
        return await self._call("GET", f"/jobs/{job_id}/checkpoints/config", dict)

    async def close(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

    # -- beyond the ClusterClient protocol -----------------------------------------------------

    async def get_job_details(self, job_id: str) -> JobDetailsInfo:
        return await self._call("GET", f"/jobs/{job_id}", JobDetailsInfo)

    async def get_cluster_overview(self) -> ClusterOverviewWithVersion:
        return await self._call("GET", "/overview", ClusterOverviewWithVersion)

    async def list_task_managers(self) -> list[TaskManagerInfo]:
        return (await self._call("GET", "/taskmanagers", TaskManagersInfo)).taskmanagers

    async def shutdown_cluster(self) -> None:
        await self._call("DELETE", "/cluster", dict)

    async def check_rest_api_version(self) -> DashboardConfiguration:
        """Make sure the cluster can take this client's jobs, as Flink's client does before it
        talks to a cluster; raises ClusterError naming both sides' versions if not.

        ``GET /v1/config`` must answer (a 404: the server serves no REST API v1, or is no
        Flink/flott endpoint at all), the server must be flott (``flink-revision`` starts with
        ``flott-``: an Apache Flink cluster cannot run a flott JobGraph), and of this client's
        flott version, since the JobGraph file and the RPC messages are versioned with it.
        """
        try:
            offered = await self._call("GET", "/config", DashboardConfiguration)
        except RestNotFoundError as e:
            raise ClusterError(
                f"{self.base_url} does not serve the REST API {REST_API_VERSION} this client speaks "
                f"(flott {FLOTT_VERSION}): {e}"
            ) from e
        if not offered.flink_revision.startswith("flott-"):
            raise ClusterError(
                f"{self.base_url} is Apache Flink {offered.flink_version} (revision "
                f"{offered.flink_revision}), not flott: this client (flott {FLOTT_VERSION}, REST API "
                f"{REST_API_VERSION}) submits flott job graphs, which only a flott cluster runs"
            )
        if offered.flink_revision != FLINK_REVISION:
            raise ClusterError(
                f"version mismatch: the cluster at {self.base_url} runs {offered.flink_revision} "
                f"(REST API {REST_API_VERSION}), this client is {FLINK_REVISION}; submit with the "
                f"cluster's flott version"
            )
        return offered

    async def __aenter__(self) -> RestClusterClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _remove(graph_file: Path, scratch: Path) -> None:
    """Delete the temporary JobGraph file and zipped directories, whatever the submission's outcome."""
    graph_file.unlink(missing_ok=True)
    shutil.rmtree(scratch, ignore_errors=True)


def _operation_status(
    status_id: str,
    failure_cause: SerializedThrowable | None,
    *,
    location: str | None = None,
    checkpoint_id: int | None = None,
) -> OperationStatus:
    """A REST AsynchronousOperationResult as the runtime's OperationStatus (the failure rebuilt)."""
    return OperationStatus(
        status=status_id,
        location=location,
        checkpoint_id=checkpoint_id,
        failure=from_serialized_throwable(failure_cause) if failure_cause is not None else None,
    )


def _error_strings(payload: bytes) -> list[str]:
    try:
        body = json.loads(payload)
    except ValueError:
        return [payload.decode("utf-8", "replace")[:500]] if payload else []
    errors = body.get("errors") if isinstance(body, dict) else None
    return [str(e) for e in errors] if isinstance(errors, list) else [str(body)[:500]]


class RestExecutor:
    """The PipelineExecutor for a remote cluster (``flott run -m host:port``): submit over REST.

    The returned JobClient polls the cluster through the same RestClusterClient;
    the client is closed once the job's result has been fetched.
    """

    def __init__(
        self,
        configuration: Configuration | None = None,
        address: str | None = None,
        loop: LoopThread | None = None,
        *,
        token: str | None = None,
    ) -> None:
        self.config = configuration or Configuration()
        self.address = address
        self.loop = loop or shared_loop_thread()
        self.token = token

    def execute(self, job_graph: JobGraph) -> JobClient:
        from flott.client.pipeline_executor import refuse_unshippable_python_options

        refuse_unshippable_python_options(job_graph.config, embedded=False)
        client = RestClusterClient(self.config, self.address, token=self.token)
        try:
            self.loop.run(client.submit_job(job_graph))
        except BaseException:
            self.loop.run(client.close())
            raise
        return JobClient(job_graph.job_id, job_graph.job_name, client, self.loop, on_terminal=client.close)


class SyncRestClusterClient:
    """RestClusterClient for synchronous code: the same methods, each returning its result.

    The calls run on flott's client event loop thread, so this works from scripts,
    notebooks and threads that have no event loop of their own::

        with SyncRestClusterClient(address="127.0.0.1:8081") as client:
            for job in client.list_jobs():
                print(job.job_id, job.status)
    """

    def __init__(
        self,
        config: Configuration | None = None,
        address: str | None = None,
        loop: LoopThread | None = None,
        *,
        token: str | None = None,
    ) -> None:
        self.client = RestClusterClient(config, address, token=token)
        self._loop = loop or shared_loop_thread()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.client, name)
        if not inspect.iscoroutinefunction(method):
            return method

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._loop.run(method(*args, **kwargs))

        call.__name__ = name
        call.__doc__ = method.__doc__
        return call

    def close(self) -> None:
        self._loop.run(self.client.close())

    def __enter__(self) -> SyncRestClusterClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["RestClusterClient", "RestExecutor", "SyncRestClusterClient"]
