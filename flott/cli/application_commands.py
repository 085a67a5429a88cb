"""Application mode from the command line, and the program runner of an application cluster.

``flott jobmanager start-application job.py [args] [-p N] [-D k=v] [--detached]`` runs an
application cluster in the foreground (a container's entrypoint, or an operator's process
supervisor, owns it); its exit code is the application's (Flink's codes: 0 SUCCEEDED or
CANCELED, 1443 FAILED, 1445 UNKNOWN, seen by a shell modulo 256 as 163 and 165).

``flott run-application job.py --target local [-p N] [-d] [-D k=v]`` is the client: it starts
that JobManager as a background process on free ports, waits until its REST endpoint answers,
then

* attached: the program's output (the JobID line, then the job's failure cause or its final
  status, exactly as ``flott run`` prints them) comes through, and the command exits with the
  JobManager's exit code once it ended;
* detached (``-d``): prints the JobID and returns; the cluster ends when the job ends (its
  output goes to a log file under the run directory).

``python -m flott.cli.application_commands --rest HOST:PORT [--detached] [-D k=v ...] -- job.py
[args]`` is what the application cluster starts as its child: the user's program in plan mode,
submitting to the cluster's own REST endpoint, so user code runs outside the JobManager.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click

from flott.configuration import (
    Configuration,
    is_sensitive,
    secrets_environment,
    take_secrets_from_environment,
)
from flott.errors import FlottError, JobSubmissionError

_READY_TIMEOUT_S = 60.0
"""How long the client waits for the JobManager's REST endpoint, and (detached) for the job."""
_STOP_GRACE_S = 15.0

# --------------------------------------------------------------------------- click commands


def _config(
    conf_dir: str | None,
    dynamic: tuple[str, ...],
    parallelism: int | None,
    process: str = "client",
    own_process: bool = False,
) -> Configuration:
    from flott.cli.options import load_config

    overrides = {"parallelism.default": str(parallelism) if parallelism else None}
    return load_config(conf_dir, dynamic, process, own_process, overrides)


def _common_options(fn: Any) -> Any:
    from flott.cli.options import config_option, dynamic_option

    for option in reversed(
        [
            click.option(
                "-p", "--parallelism", type=int, default=None, help="Default parallelism of the job."
            ),
            config_option,
            dynamic_option,
        ]
    ):
        fn = option(fn)
    return fn


_ARGS = {"ignore_unknown_options": True, "allow_interspersed_args": False}


@click.command(name="start-application", context_settings=_ARGS)
@_common_options
@click.option(
    "--detached",
    is_flag=True,
    help="End the cluster as soon as the job ends (else: once a client fetched its result).",
)
@click.argument("script", type=click.Path())
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def start_application_command(
    parallelism: int | None,
    conf_dir: str | None,
    dynamic: tuple[str, ...],
    detached: bool,
    script: str,
    args: tuple[str, ...],
) -> None:
    """Run an application cluster for SCRIPT in the foreground: a JobManager that runs this one
    program's job on TaskManagers it starts itself, and exits with the application's status."""
    config = _config(conf_dir, dynamic, parallelism, "standalonejob", own_process=True)
    sys.exit(start_application(config, script, args, detached))


@click.command(name="run-application", context_settings=_ARGS)
@click.option(
    "-t",
    "--target",
    default="local",
    show_default=True,
    help="Where the application cluster runs (only 'local': a JobManager process on this machine).",
)
@_common_options
@click.option(
    "-d", "--detached", is_flag=True, help="Print the JobID and return; the cluster ends with the job."
)
@click.argument("script", type=click.Path())
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run_application_command(
    target: str,
    parallelism: int | None,
    conf_dir: str | None,
    dynamic: tuple[str, ...],
    detached: bool,
    script: str,
    args: tuple[str, ...],
) -> None:
    """Run SCRIPT in application mode: a cluster of its own that ends when its job ends."""
    if target != "local":
        raise click.UsageError(f"--target {target!r}: only 'local' is supported")
    config = _config(conf_dir, dynamic, parallelism)
    sys.exit(run_application(config, script, args, detached))


# --------------------------------------------------------------------------- the JobManager


def start_application(config: Configuration, script: str, args: tuple[str, ...], detached: bool) -> int:
    from flott.cli.options import verbosity

    # deferred: the JobManager (runtime, REST server, uvloop), ~0.7 s the CLI's other commands skip
    from flott.cluster.application_cluster import ApplicationProgram, run_application_cluster
    from flott.runtime.entrypoint import event_loop

    if not Path(script).is_file():
        click.echo(f"error: no such script: {script}", err=True)
        return 2
    try:
        status = event_loop.run(
            run_application_cluster(config, ApplicationProgram(script, list(args), verbosity()), detached)
        )
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # startup errors (port in use, bad config) end with a message
        click.echo(f"JobManager failed: {e}", err=True)
        return 1
    return status.process_exit_code


# --------------------------------------------------------------------------- the client


def _free_port(host: str) -> int:
    import socket

    with socket.socket() as s:
        s.bind((host if host not in ("", "0.0.0.0") else "127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get_json(url: str, config: Configuration | None = None, token: str | None = None) -> Any:
    import json
    import urllib.request

    context = None
    if url.startswith("https:"):
        # deferred: the ssl module, ~20 ms of every CLI command's start-up, needed for https only
        from flott.ssl_context import rest_client_ssl  # security.ssl.rest.*: truststore, client cert

        context = rest_client_ssl(config or Configuration())
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=5, context=context) as r:
        return json.loads(r.read())


def _wait(proc: subprocess.Popen[bytes], check: Any, timeout_s: float) -> Any:
    """Poll ``check()`` until it returns something truthy; None if the process ended or time ran out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError, ValueError):
            value = check()
            if value:
                return value
        time.sleep(0.1)
    return None


def _exit_code(code: int) -> int:
    return 128 - code if code < 0 else code


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(_STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_application(config: Configuration, script: str, args: tuple[str, ...], detached: bool) -> int:
    path = Path(script)
    if not path.is_file():
        click.echo(f"error: no such script: {script}", err=True)
        return 2
    values = config.to_dict()
    if not config.contains("rest.port"):
        values["rest.port"] = str(_free_port(config.get("rest.bind-address")))
    values.setdefault("jobmanager.rpc.port", "0")
    values.setdefault("blob.server.port", "0")
    port = int(values["rest.port"])
    scheme = "https" if config.get_bool("security.ssl.rest.enabled", False) else "http"
    base_url = f"{scheme}://{config.get('rest.address')}:{port}"
    from flott.rest import authentication  # deferred: hashlib, hmac: ~6 ms of every CLI command's start-up

    # Secrets, and the REST tokens, go to the JobManager in its environment, never on its command
    # line (ps). With REST authentication this command waits with a read-only token of its own.
    secret = {k: v for k, v in values.items() if is_sensitive(k)}
    token: str | None = None
    if authentication.auth_configured(config):
        token = authentication.new_internal_token()
        handed = authentication.handed_over_tokens(config, token, authentication.Role.READ_ONLY)
        secret[authentication.TOKENS_KEY] = handed
    from flott.cli.options import verbosity

    cmd = [sys.executable, "-m", "flott.cli.main", *["-v"] * verbosity(), "jobmanager", "start-application"]
    for key, value in values.items():
        if key not in secret:
            cmd += ["-D", f"{key}={value}"]
    if detached:
        cmd.append("--detached")
    cmd += [str(path.resolve()), *args]
    env = secrets_environment(secret, os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    if detached:
        from flott.cli.cluster_commands import run_dir

        log_path = run_dir() / f"application-{port}.log"
        with log_path.open("ab") as log:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, start_new_session=True
            )
        return _detached(proc, base_url, log_path, config, token)
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    try:
        if _wait(proc, lambda: _get_json(f"{base_url}/v1/config", config, token), _READY_TIMEOUT_S) is None:
            if proc.poll() is None:
                click.echo(f"The application cluster's REST endpoint ({base_url}) did not answer.", err=True)
                _terminate(proc)
                return 1
            return _exit_code(proc.returncode)
        return _exit_code(proc.wait())
    except KeyboardInterrupt:
        click.echo("Interrupted: stopping the application cluster (its job is cancelled)", err=True)
        _terminate(proc)
        return 130


def _detached(
    proc: subprocess.Popen[bytes], base_url: str, log_path: Path, config: Configuration, token: str | None
) -> int:
    def job_id() -> str | None:
        jobs = _get_json(f"{base_url}/v1/jobs/overview", config, token).get("jobs", [])
        return str(jobs[0]["jid"]) if jobs else None

    found = _wait(proc, job_id, 2 * _READY_TIMEOUT_S)
    if found is None:
        if proc.poll() is None:
            click.echo(f"The application cluster submitted no job in time; see {log_path}", err=True)
            _terminate(proc)
            return 1
        tail = log_path.read_text(errors="replace").strip().splitlines()[-15:]
        click.echo("\n".join(tail), err=True)
        click.echo(f"The application cluster ended without running a job (log: {log_path})", err=True)
        return _exit_code(proc.returncode) or 1
    click.echo(f"Job has been submitted with JobID {found}")
    click.echo(
        f"Application cluster: JobManager pid {proc.pid}, REST at {base_url}; it ends when the job "
        f"ends (log: {log_path})",
        err=True,
    )
    return 0


# --------------------------------------------------------------------------- the program


def run_program(
    script: str, args: list[str], config: Configuration, rest_address: str, detached: bool
) -> int:
    """Run the user's program in plan mode; its ``env.execute()`` submits to ``rest_address``.

    Prints what ``flott run -m`` prints. With a fixed job id (HA), a job the cluster already
    knows (recovered by a restarted JobManager, or finished before it) is attached to rather than
    submitted a second time.
    """
    import runpy

    from flott.cli.run_command import (
        DetachedExecutor,
        client_python_files,
        console,
        report_program_failure,
    )
    from flott.cli.run_options import ProgramEntry

    # deferred: the client's executors (the DataStream API, the embedded cluster), ~0.6 s of CLI start-up
    from flott.client import pipeline_executor
    from flott.client.pipeline_executor import use_executor

    path = Path(script)
    if not path.is_file():
        console.print(f"error: no such script: {script}", markup=False, style="red")
        return 2
    remote = _ApplicationExecutor(config, rest_address)
    executor: Any = DetachedExecutor(remote) if detached else _AttachedExecutor(remote)
    old_argv = sys.argv
    sys.argv = [str(path), *args]
    sys.path.insert(0, str(path.resolve().parent))
    pipeline_executor.set_context_configuration(config)
    try:
        with use_executor(executor), client_python_files(config):
            runpy.run_path(str(path), run_name="__main__")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except Exception as e:  # reported as `flott run` reports it: one message, the program's own frames
        report_program_failure(e, ProgramEntry("script", str(path), tuple(args)))
        return 1
    finally:
        sys.argv = old_argv
        pipeline_executor.set_context_configuration(None)
    for c in executor.clients:
        if detached:
            c.loop.run(c.cluster_client.close())
        else:
            status = c.get_job_status().result(timeout=10).name
            console.print(f"Job {c.get_job_id()} {status}")
    return 0


class _ApplicationExecutor:
    """RestExecutor that attaches to a job the cluster already has under the fixed job id."""

    def __init__(self, config: Configuration, address: str) -> None:
        from flott.client.rest_cluster_client import RestExecutor  # deferred: aiohttp, ~0.5 s of CLI start-up

        self._inner = RestExecutor(config, address)
        self._fixed = bool(config.get("$internal.pipeline.job-id", ""))
        self._executed: str | None = None
        self.attached = False
        """The last ``execute()`` found its job on the cluster already (and did not submit it)."""

    def execute(self, job_graph: Any) -> Any:
        from flott.cli.run_command import console

        # deferred: aiohttp and the job client, ~0.5 s of CLI start-up
        from flott.client.rest_cluster_client import RestClusterClient
        from flott.common.job_client import JobClient

        if self._fixed:
            if self._executed is not None:
                # every job of this program would get the same fixed id: only the first can run
                raise JobSubmissionError(
                    f"this application cluster runs exactly one job ({self._executed}); job "
                    f"'{job_graph.job_name}' is refused: a program in application mode may submit "
                    f"one job only"
                )
            self._executed = job_graph.job_id
            inner = self._inner
            client = RestClusterClient(inner.config, inner.address)
            try:
                status = inner.loop.run(client.get_job_status(job_graph.job_id))
            except FlottError:
                status = None
            if status is not None:
                self.attached = True
                console.print(
                    f"Job {job_graph.job_id} is known to this cluster already ({status}): attaching "
                    f"to it instead of submitting it again"
                )
                return JobClient(
                    job_graph.job_id, job_graph.job_name, client, inner.loop, on_terminal=client.close
                )
            inner.loop.run(client.close())
        return self._inner.execute(job_graph)


class _AttachedExecutor:
    def __init__(self, inner: _ApplicationExecutor) -> None:
        self._inner = inner
        self.clients: list[Any] = []

    def execute(self, job_graph: Any) -> Any:
        from flott.cli.run_command import console

        client = self._inner.execute(job_graph)
        self.clients.append(client)
        if not self._inner.attached:
            console.print(f"Job has been submitted with JobID {job_graph.job_id}")
        return client


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="flott-application-program")
    parser.add_argument("--rest", required=True, help="HOST:PORT of the application cluster's REST endpoint")
    parser.add_argument("--detached", action="store_true")
    parser.add_argument("-v", dest="verbose", action="count", default=0)
    parser.add_argument("-D", dest="dynamic", action="append", default=[])
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    # Secrets come in the environment from the cluster, never on the command line (ps).
    config = Configuration({**Configuration.parse_dynamic(ns.dynamic), **take_secrets_from_environment()})
    # deferred: logging set-up (getpass, termios), ~2 ms of every CLI command's start-up
    from flott.runtime.entrypoint.runtime_logging import configure_logging

    configure_logging(config, "client", own_process=False)
    # The CLI's verbosity lives in click's context (flott.cli.options.verbosity): give it one.
    with click.Context(click.Command("program"), obj={"verbose": ns.verbose}):
        return run_program(ns.script, list(ns.args), config, ns.rest, ns.detached)


if __name__ == "__main__":
    sys.exit(main())
