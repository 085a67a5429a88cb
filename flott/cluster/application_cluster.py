"""The JobManager process of an application cluster (Flink: application / job-cluster entrypoint).

A cluster that exists for one program: ``flott jobmanager start-application job.py [args]``.
It starts, in this order, the RPC service, a ResourceManager in active mode (TaskExecutor
processes started on demand for the slots the job asks for, crashed ones replaced; those
``parallelism.default`` asks for are started at once, in parallel with the program), the
BlobServer, a :class:`~flott.runtime.dispatcher.mini_dispatcher.MiniDispatcher` and the REST
endpoint. Then it runs the user's program in plan mode in a *child process*
(``python -m flott.cli.application_commands``) whose ``env.execute()`` submits the job to this
cluster's own REST endpoint: this process never imports, unpickles or runs user code, so the
control plane stays what a session cluster's is.

How it ends:

* the MiniDispatcher's shutdown future (its job is globally terminal; DETACHED at once, NORMAL
  once a client fetched the result or after ``application.result-retrieval-timeout``) gives
  the :class:`ApplicationStatus`;
* a program that fails before submitting, or ends without submitting anything, ends the
  application FAILED with the program's error; so does one that fails after its job succeeded
  (Flink's application is the program, not only its job);
* SIGTERM/SIGINT end it UNKNOWN (the job, still running, is cancelled).

Then the program is given a few seconds to finish (it may still be printing its result;
the REST endpoint serves until it is gone), everything is stopped, and the status's
process exit code (Flink's: 0, 1443, 0, 1445) is returned to the CLI.

With ``high-availability.type: zookeeper`` the job id is deterministic, derived from
``high-availability.cluster-id`` (Flink's ``$internal.pipeline.job-id``), so a JobManager
started again re-runs ``main()`` and meets the same job instead of running a second one:
:class:`HaApplicationClusterEntrypoint` runs the HA session JobManager (leader election, job
recovery from the latest checkpoint, JobResultStore) for the program, see its docstring.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import hashlib
import logging
import os
import signal
import sys
from dataclasses import dataclass, field
from typing import Any

from flott.client.rest_cluster_client import RestClusterClient
from flott.configuration import Configuration, secrets_environment, split_secrets
from flott.errors import FlottError, JobNotFoundError
from flott.rest.authentication import CLIENT_TOKEN_ENV, Role, new_internal_token
from flott.rest.errors import RestNotFoundError
from flott.rest.webmonitor.rest_server_endpoint import RestServerEndpoint
from flott.runtime.blob.blob_server import BlobServer
from flott.runtime.dispatcher.mini_dispatcher import ApplicationStatus, ExecutionMode, MiniDispatcher
from flott.runtime.entrypoint.jobmanager_process import (
    jobmanager_rpc_service,
    set_on_termination_signals,
    stop_components,
)
from flott.runtime.gateways.dispatcher_gateway import DISPATCHER_ENDPOINT, DispatcherGateway
from flott.runtime.gateways.resource_manager_gateway import RESOURCE_MANAGER_ENDPOINT, ResourceManagerGateway
from flott.runtime.jobgraph import new_id
from flott.runtime.resourcemanager.resource_manager import ResourceManager

log = logging.getLogger(__name__)

FIXED_JOB_ID = "$internal.pipeline.job-id"
"""Flink's PipelineOptionsInternal key; :mod:`flott.graph.job_graph_generator` reads it."""
RESULT_RETRIEVAL_TIMEOUT = "application.result-retrieval-timeout"
PROGRAM_MODULE = "flott.cli.application_commands"
"""What the child process runs: the client-side program runner."""

_PROGRAM_GRACE_S = 10.0
"""How long a program still running after the application ended may take to finish."""
_PR_SET_PDEATHSIG = 1


@dataclass
class ApplicationProgram:
    """The user's program: a script and its arguments (``verbose``: the CLI's ``-v`` count, so a
    failing program reports its traceback as ``flott -v run`` would)."""

    script: str
    args: list[str] = field(default_factory=list)
    verbose: int = 0


def high_availability_enabled(config: Configuration) -> bool:
    return config.get("high-availability.type", "none").strip().lower() == "zookeeper"


def application_job_id(config: Configuration) -> str | None:
    """The job id an application's program must use: a configured ``$internal.pipeline.job-id``,
    else with HA one derived from the cluster id (stable across JobManager restarts), else None
    (a fresh id per submission, as for any job)."""
    fixed = config.get(FIXED_JOB_ID, "").strip().lower()
    if fixed:
        return fixed
    if not high_availability_enabled(config):
        return None
    cluster_id = config.get("high-availability.cluster-id")
    return hashlib.md5(f"flott-application|{cluster_id}".encode()).hexdigest()


def execution_mode(config: Configuration, detached: bool) -> ExecutionMode:
    """``--detached`` or ``execution.attached: false`` make the cluster end with its job; else it
    waits for a client to fetch the result."""
    if detached or not config.get_bool("execution.attached", True):
        return ExecutionMode.DETACHED
    return ExecutionMode.NORMAL


def _die_with_parent() -> None:  # in the child, between fork and exec
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    os.setpgrp()  # a Ctrl-C at the terminal reaches this process, which decides for the program


class _ApplicationEntrypoint:
    """What both flavours share: the program child and the wait for the application's end.

    A flavour provides ``start()``, ``stop()``, :attr:`ended` (completed with the application's
    status once it is over) and :meth:`job_submitted`.
    """

    def __init__(self, config: Configuration, program: ApplicationProgram, mode: ExecutionMode) -> None:
        job_id = application_job_id(config)
        self.config = config.with_overrides({FIXED_JOB_ID: job_id}) if job_id else config
        self.job_id = job_id
        self.program = program
        self.mode = mode
        self.rest_address = ""
        """``host:port`` this process's program child submits to."""
        self.internal_token: str | None = None
        """With REST authentication: the operator token of this process's own clients (the
        program child, in its environment, and the HA flavour's watcher); in memory only."""
        self.program_process: asyncio.subprocess.Process | None = None
        self.program_exited = asyncio.Event()
        self.program_error: list[str] = []
        """The last lines the program wrote to stderr."""
        self._stderr_pump: asyncio.Task[None] | None = None
        self._signalled = asyncio.Event()
        self.ended: asyncio.Future[ApplicationStatus] = asyncio.get_running_loop().create_future()

    def _trust_own_clients(self, rest: Any) -> None:
        """With REST authentication on, accept a fresh operator token for this process's own clients."""
        if rest.authenticator is not None:
            self.internal_token = new_internal_token()
            rest.authenticator.add_token(self.internal_token, Role.OPERATOR)

    def _set_rest_address(self, host: str, port: int) -> None:
        # the program runs on this host: a wildcard bind is reached over loopback
        local = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
        self.rest_address = f"[{local}]:{port}" if ":" in local else f"{local}:{port}"

    async def job_submitted(self) -> bool:
        raise NotImplementedError

    def describe_end(self) -> str:
        return ""

    # -- the program ---------------------------------------------------------------------------

    def program_command(self) -> list[str]:
        cmd = [sys.executable, "-m", PROGRAM_MODULE, "--rest", self.rest_address]
        if self.mode is ExecutionMode.DETACHED:
            cmd.append("--detached")
        cmd += ["-v"] * self.program.verbose
        plain, _ = split_secrets(self.config.to_dict())  # secrets: see _start_program
        for key, value in plain.items():
            cmd += ["-D", f"{key}={value}"]
        return [*cmd, "--", self.program.script, *self.program.args]

    async def _start_program(self) -> asyncio.subprocess.Process:
        env = secrets_environment(split_secrets(self.config.to_dict())[1], os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        if self.internal_token is not None:
            env[CLIENT_TOKEN_ENV] = self.internal_token
        proc = await asyncio.create_subprocess_exec(
            *self.program_command(),
            stdin=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            preexec_fn=_die_with_parent,
        )
        self.program_process = proc
        log.info("application program %s started (pid %d)", self.program.script, proc.pid)
        assert proc.stderr is not None
        self._stderr_pump = asyncio.get_running_loop().create_task(self._pump_stderr(proc.stderr))
        return proc

    async def _pump_stderr(self, stream: asyncio.StreamReader) -> None:
        """The program's stderr goes on to ours; its last lines are kept for the failure message."""
        tail: collections.deque[str] = collections.deque(maxlen=30)
        out = sys.stderr.buffer
        while line := await stream.readline():
            with contextlib.suppress(OSError, ValueError):
                out.write(line)
                out.flush()
            tail.append(line.decode("utf-8", "replace").rstrip())
            self.program_error = list(tail)

    async def _stop_program(self, grace_s: float) -> int | None:
        """Give the program ``grace_s`` to end, then terminate it; its exit code if it ended by itself."""
        proc = self.program_process
        if proc is None:
            return None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), grace_s)
        own_exit_code = proc.returncode
        if proc.returncode is None:
            log.warning("the application program (pid %d) is still running: terminating it", proc.pid)
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 3.0)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        if self._stderr_pump is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._stderr_pump, 2.0)
        return own_exit_code

    def _program_failure(self, code: int) -> str:
        lines = [line for line in self.program_error if line.strip()]
        cause = lines[-1] if lines else "no error output"
        if code == 0:
            return f"the program {self.program.script} ended without submitting a job"
        return f"the program {self.program.script} failed (exit code {code}) before submitting a job: {cause}"

    # -- lifecycle -----------------------------------------------------------------------------

    async def run(self) -> ApplicationStatus:
        """Run the program and wait until the application ends; returns its status."""
        loop = asyncio.get_running_loop()
        set_on_termination_signals(self._signalled, self.config)
        proc = await self._start_program()
        ended = self.ended
        program_done: asyncio.Future[int] = loop.create_task(proc.wait())
        signalled: asyncio.Future[bool] = loop.create_task(self._signalled.wait())
        program_exit_code: int | None = None
        try:
            while True:
                waiting: set[asyncio.Future[Any]] = {ended, program_done, signalled}
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if ended.done():
                    status = ended.result()
                    grace = _PROGRAM_GRACE_S
                    break
                if signalled.done():
                    log.warning("stopped by a signal: the application ends UNKNOWN")
                    status, grace = ApplicationStatus.UNKNOWN, 1.0
                    break
                if program_done.done():
                    self.program_exited.set()
                    if not await self.job_submitted():
                        await self._stop_program(2.0)  # the rest of its error output
                        log.error("application FAILED: %s", self._program_failure(program_done.result()))
                        status, grace = ApplicationStatus.FAILED, 0.0
                        break
                    # a detached program, or one that did not wait: the job decides from here on
                    program_exit_code = program_done.result()
                    program_done = loop.create_future()
        finally:
            for task in (program_done, signalled):
                task.cancel()
        if program_exit_code is None:
            program_exit_code = await self._stop_program(grace)
        else:
            await self._stop_program(grace)
        if status is ApplicationStatus.SUCCEEDED and program_exit_code:
            # As in Flink, the application is the program, not only its job: main() raising after
            # its job finished (checking the result, writing a report) fails the application.
            cause = next((line for line in reversed(self.program_error) if line.strip()), "no error output")
            log.error(
                "application FAILED: its job succeeded, but the program %s then failed (exit code %d): %s",
                self.program.script,
                program_exit_code,
                cause,
            )
            status = ApplicationStatus.FAILED
        log.info("application %s (%s): shutting down", status.name, self.describe_end())
        return status


class ApplicationClusterEntrypoint(_ApplicationEntrypoint):
    """The application cluster without HA: see the module docstring."""

    def __init__(self, config: Configuration, program: ApplicationProgram, mode: ExecutionMode) -> None:
        super().__init__(config, program, mode)
        self.rpc = jobmanager_rpc_service(config)
        self.resource_manager: ResourceManager | None = None
        self.dispatcher: MiniDispatcher | None = None
        self.blob_server: BlobServer | None = None
        self.rest: object | None = None

    async def start(self) -> None:
        await self.rpc.start()
        rm = self.resource_manager = ResourceManager(self.rpc, self.config)
        await rm.start()
        driver = rm.enable_workers_on_demand()
        # The job's workers are started on demand; as many as the default parallelism asks for
        # start now, while the program starts, which takes a process start off the critical path.
        per_worker = max(1, self.config.get_int("taskmanager.numberOfTaskSlots"))
        for _ in range(-(-max(1, self.config.get_int("parallelism.default")) // per_worker)):
            driver.start_task_executor(new_id())
        rm_gateway = self.rpc.connect(self.rpc.address, RESOURCE_MANAGER_ENDPOINT, ResourceManagerGateway)
        blob_server = self.blob_server = BlobServer(self.config)
        await blob_server.start()
        self.dispatcher = MiniDispatcher(
            self.rpc,
            self.config,
            rm_gateway,
            self.mode,
            result_timeout_s=self.config.get_seconds(RESULT_RETRIEVAL_TIMEOUT),
            blob_server=blob_server,
        )
        await self.dispatcher.start()
        self.dispatcher.shutdown_future.add_done_callback(self._dispatcher_done)
        gateway = self.rpc.connect(self.rpc.address, DISPATCHER_ENDPOINT, DispatcherGateway)
        rest = RestServerEndpoint(self.config, gateway)
        self.rest = rest
        self._trust_own_clients(rest)
        host, port = await rest.start()
        self._set_rest_address(host, port)
        log.info(
            "application cluster (%s): JobManager RPC at %s, REST at http://%s:%d, BlobServer at %s",
            self.mode.name,
            self.rpc.address,
            self.config.get("rest.address"),
            port,
            blob_server.address,
        )

    def _dispatcher_done(self, done: asyncio.Future[ApplicationStatus]) -> None:
        if not self.ended.done() and not done.cancelled():
            self.ended.set_result(done.result())

    async def job_submitted(self) -> bool:
        return self.dispatcher is not None and self.dispatcher.job_id is not None

    def describe_end(self) -> str:
        d = self.dispatcher
        if d is None or d.job_id is None:
            return "no job"
        return f"job {d.job_id} {d.job_result.status if d.job_result is not None else 'not ended'}"

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await self._stop_program(0.0)
        await stop_components(self.rpc, self.rest, self.dispatcher, self.blob_server, self.resource_manager)


class HaApplicationClusterEntrypoint(_ApplicationEntrypoint):
    """The application cluster with ZooKeeper HA: the HA session cluster's JobManager (leader
    election, JobGraphStore, recovery from the latest checkpoint, JobResultStore), running one
    program whose job has the deterministic id, watched through this process's REST endpoint.

    Differences from the flavour without HA: ``ceil(parallelism.default / slots)`` TaskExecutors
    are started up front (the HA ResourceManager has no on-demand driver); the one-job rule is
    enforced by the program runner (every ``execute()`` of the program would get the same id);
    NORMAL mode ends once the job is terminal and the program (which fetches the result) ended,
    or ``application.result-retrieval-timeout`` after the job ended. SIGTERM leaves a running job
    to the next JobManager of the same cluster id, which re-runs ``main()`` and attaches to it.
    """

    def __init__(self, config: Configuration, program: ApplicationProgram, mode: ExecutionMode) -> None:
        super().__init__(config, program, mode)
        per_worker = max(1, self.config.get_int("taskmanager.numberOfTaskSlots"))
        workers = -(-max(1, self.config.get_int("parallelism.default")) // per_worker)
        # imported here: the HA cluster loads kazoo, which an application without HA never needs
        from flott.cluster.ha_session_cluster import HaSessionClusterEntrypoint

        self.session = HaSessionClusterEntrypoint(self.config, workers)
        self.result: Any = None
        self._watcher: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.session.start()
        rest = self.session.rest
        self._trust_own_clients(rest)
        self._set_rest_address(rest.host, rest.port)
        self._watcher = asyncio.get_running_loop().create_task(self._watch_job())
        log.info(
            "application cluster (%s, HA): job id %s, REST at %s", self.mode.name, self.job_id, rest.port
        )

    def _client(self) -> Any:
        # security.ssl.rest.* of this cluster: how its own REST endpoint is reached
        config = self.config.with_overrides({"rest.retry.max-attempts": "0"})
        return RestClusterClient(config, self.rest_address, token=self.internal_token)

    async def _watch_job(self) -> None:
        assert self.job_id is not None
        async with self._client() as client:
            while self.result is None:
                try:
                    self.result = await client.request_job_result(self.job_id, 1.0)
                except FlottError:  # not submitted (yet), or no leader at the moment
                    await asyncio.sleep(0.3)
        status = ApplicationStatus.from_job_status(self.result.status)
        if self.mode is ExecutionMode.NORMAL and status is not ApplicationStatus.CANCELED:
            with contextlib.suppress(TimeoutError):
                timeout = self.config.get_seconds(RESULT_RETRIEVAL_TIMEOUT)
                await asyncio.wait_for(self.program_exited.wait(), timeout)
        if not self.ended.done():
            self.ended.set_result(status)

    async def job_submitted(self) -> bool:
        assert self.job_id is not None
        async with self._client() as client:
            for _ in range(20):  # a few seconds for a leader to be there
                try:
                    await client.get_job_status(self.job_id)
                    return True
                except (JobNotFoundError, RestNotFoundError):
                    return False
                except FlottError:
                    await asyncio.sleep(0.3)
        return False

    def describe_end(self) -> str:
        status = self.result.status if self.result is not None else "not ended"
        return f"job {self.job_id} {status}"

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await self._stop_program(0.0)
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(BaseException):
                await self._watcher
        await self.session.stop()


async def run_application_cluster(
    config: Configuration, program: ApplicationProgram, detached: bool = False
) -> ApplicationStatus:
    """Run an application cluster until its application ends; returns the application's status."""
    mode = execution_mode(config, detached)
    entrypoint: ApplicationClusterEntrypoint | HaApplicationClusterEntrypoint
    if high_availability_enabled(config):
        entrypoint = HaApplicationClusterEntrypoint(config, program, mode)
    else:
        entrypoint = ApplicationClusterEntrypoint(config, program, mode)
    try:
        await entrypoint.start()
        return await entrypoint.run()
    finally:
        await entrypoint.stop()


__all__ = [
    "ApplicationClusterEntrypoint",
    "ApplicationProgram",
    "ApplicationStatus",
    "ExecutionMode",
    "HaApplicationClusterEntrypoint",
    "application_job_id",
    "run_application_cluster",
]
