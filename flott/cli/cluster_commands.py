"""``flott jobmanager|taskmanager|cluster ...``: start and stop cluster processes.

``jobmanager start`` and ``taskmanager start`` run in the foreground (a
process supervisor or a container entrypoint owns them). ``cluster start``
starts a JobManager in the background with local TaskExecutors, waits until
its REST endpoint answers with every TaskExecutor registered, and records the
process id so ``cluster stop`` can end it and everything it started. With REST
authentication configured, ``cluster start`` asks with a read-only token of its
own, handed to the JobManager in its environment and forgotten once it answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import click
import psutil

from flott.configuration import Configuration, secrets_environment
from flott.rest import authentication
from flott.runtime.entrypoint import event_loop, runtime_logging


def run_dir() -> Path:
    """flott's run directory (pid files, the processes' stdout), created if missing."""
    path = runtime_logging.run_dir()
    path.mkdir(parents=True, exist_ok=True)
    return path


def with_log_dir(config: Configuration) -> Configuration:
    """``env.log.dir`` resolved, so the JobManager's ``GET /jobmanager/logs`` lists its log files."""
    return config.with_overrides({runtime_logging.ENV_LOG_DIR: str(runtime_logging.log_dir(config))})


def pid_file(rest_port: int) -> Path:
    return run_dir() / f"cluster-{rest_port}.pid"


def run_jobmanager(config: Configuration, local_task_managers: int) -> int:
    # deferred: the JobManager, ~0.7 s that the other cluster commands skip
    from flott.cluster.session_cluster import run_session_cluster

    try:
        event_loop.run(run_session_cluster(with_log_dir(config), local_task_managers))
    except KeyboardInterrupt:
        return 0
    except Exception as e:  # startup errors (port in use, bad config) end with a message, not a traceback
        click.echo(f"JobManager failed: {e}", err=True)
        return 1
    return 0


def run_taskmanager(config: Configuration, jobmanager: str | None) -> int:
    # deferred: the TaskExecutor, ~0.3 s that `cluster start|stop` and `jobmanager start` skip
    from flott.runtime.jobgraph import new_id
    from flott.runtime.taskexecutor.runner import run_task_executor, tune_garbage_collector

    tune_garbage_collector()
    address = jobmanager or f"{config.get('jobmanager.rpc.address')}:{config.get('jobmanager.rpc.port')}"
    try:
        event_loop.run(run_task_executor(config, address, new_id()))
    except KeyboardInterrupt:
        return 0
    except Exception as e:
        click.echo(f"TaskManager failed: {e}", err=True)
        return 1
    return 0


def _rest_address(config: Configuration) -> str:
    return f"{config.get('rest.address')}:{config.get('rest.port')}"


async def _wait_ready(
    address: str,
    task_managers: int,
    deadline: float,
    proc: subprocess.Popen[bytes],
    config: Configuration,
    token: str | None = None,
) -> bool:
    # deferred: aiohttp, ~0.5 s that only `cluster start` needs
    from flott.client.rest_cluster_client import RestClusterClient

    # the command's configuration: its security.ssl.rest.* keys say how to reach the endpoint
    cfg = config.with_overrides({"rest.retry.max-attempts": "0"})
    async with RestClusterClient(cfg, address, token=token) as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            # each look bounded: whatever holds the port may accept and never answer, and the
            # JobManager's own end (it could not bind) must still be seen between two looks
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2.0):
                    overview = await client.get_cluster_overview()
                if overview.taskmanagers >= task_managers:
                    return True
            await asyncio.sleep(0.1)
    return False


def start_cluster(
    config: Configuration, task_managers: int, config_args: list[str], secrets: dict[str, str] | None = None
) -> int:
    port = config.get_int("rest.port")
    pf = pid_file(port)
    running = cluster_process(pf)
    if running is not None:
        click.echo(f"A flott cluster is already running with REST port {port} (pid {running.pid}).", err=True)
        return 1

    internal: str | None = None
    if authentication.auth_configured(config):
        internal = authentication.new_internal_token()
        handed = authentication.handed_over_tokens(config, internal, authentication.Role.READ_ONLY)
        secrets = {**(secrets or {}), authentication.TOKENS_KEY: handed}
    log_path = run_dir() / f"jobmanager-{port}.log"
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "flott.cli.main",
                "jobmanager",
                "start",
                "--taskmanagers",
                str(task_managers),
                *config_args,
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            env=secrets_environment(secrets or {}, os.environ),
        )
    pf.write_text(str(proc.pid))
    address = _rest_address(config)
    ok = asyncio.run(_wait_ready(address, task_managers, time.monotonic() + 60, proc, config, internal))
    runtime_log = runtime_logging.log_file(config, "standalonesession")
    if not ok:
        reason = _last_line(log_path) if proc.poll() is not None else None
        if reason:  # the JobManager ended and said why (a port in use, a bad setting): say it here
            click.echo(reason, err=True)
        click.echo(f"The cluster did not come up; see {log_path} and {runtime_log}", err=True)
        _terminate(proc.pid)
        pf.unlink(missing_ok=True)
        return 1
    click.echo(
        f"Started a session cluster: JobManager pid {proc.pid}, {task_managers} TaskManager(s), "
        f"REST at {'https' if config.get_bool('security.ssl.rest.enabled', False) else 'http'}://{address}"
    )
    click.echo(
        f"Logs: {runtime_log.parent} (one file per process); the processes' own output and the jobs' "
        f"prints: {log_path}"
    )
    return 0


def _last_line(path: Path, limit: int = 64 * 1024) -> str | None:
    """The last non-empty line of a process's output file (its own one-line error, if it failed)."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - limit))
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    return next((line for line in reversed(lines) if line.strip()), None)


def cluster_process(pf: Path) -> psutil.Process | None:
    """The JobManager process a pid file names, if it still runs and is that process.

    A pid file outlives a crash or a reboot, and the kernel reuses process ids: the process
    counts only when it is flott's JobManager (its command line) and it started before the pid
    file was written (a reused id belongs to a process started later). Anything else makes the
    pid file stale, and it is removed: nothing is signalled that flott did not start."""
    try:
        pid = int(pf.read_text().strip())
        written = pf.stat().st_mtime
    except (OSError, ValueError):
        pf.unlink(missing_ok=True)
        return None
    try:
        proc = psutil.Process(pid)
        cmdline = proc.cmdline()
        started = proc.create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        pf.unlink(missing_ok=True)
        return None
    ours = "flott.cli.main" in cmdline and "jobmanager" in cmdline and started <= written + 1.0
    if not ours:
        pf.unlink(missing_ok=True)
        return None
    return proc


def _terminate(pid: int, grace_s: float = 10.0) -> None:
    try:
        proc = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    family = [proc, *proc.children(recursive=True)]
    with contextlib.suppress(psutil.NoSuchProcess):
        proc.send_signal(signal.SIGTERM)
    _, alive = psutil.wait_procs(family, timeout=grace_s)
    for p in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    psutil.wait_procs(alive, timeout=5)


def stop_cluster(config: Configuration) -> int:
    port = config.get_int("rest.port")
    pf = pid_file(port)
    if not pf.exists():
        click.echo(f"No flott cluster with REST port {port} was started from this machine.", err=True)
        return 1
    proc = cluster_process(pf)
    if proc is None:
        # as Flink's stop scripts: nothing left to stop is not a failure (the cluster is down)
        click.echo(
            f"The flott cluster with REST port {port} is no longer running (its pid file was stale and "
            "is removed; no process was signalled).",
            err=True,
        )
        return 0
    _terminate(proc.pid)
    pf.unlink(missing_ok=True)
    click.echo(f"Stopped the session cluster (pid {proc.pid}).")
    return 0
