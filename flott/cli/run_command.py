"""``flott run``: run a PyFlink-style script, on an embedded cluster or (``-m``) a remote one.

The script runs in this process in plan mode: its ``env.execute()`` builds the
JobGraph and hands it to the executor this command installs. Progress goes to
stderr, so the job's own stdout (``print()`` sinks) stays clean.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import runpy
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from flott.client.pipeline_executor import EmbeddedExecutor, use_executor
from flott.common.completable_future import CompletableFuture
from flott.common.job_client import JobClient
from flott.configuration import Configuration
from flott.errors import FlottError, JobSubmissionError
from flott.runtime.blob.python_artifacts import artifact_kind, collect_local_artifacts, materialize
from flott.runtime.jobgraph import JobGraph

console = Console(stderr=True, highlight=False)


def _fmt_count(n: int) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= div:
            return f"{n / div:.1f}{unit}"
    return str(n)


class ProgressReporter:
    """Prints a line whenever the job's state changes, and record counts every few seconds."""

    def __init__(self, client: JobClient, job_graph: JobGraph, interval: float = 2.0) -> None:
        self._client = client
        self._graph = job_graph
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="flott-progress", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2.0)

    def _run(self) -> None:
        last_line = ""
        last_print = 0.0
        while not self._stop.wait(0.25):
            try:
                info = self._client.loop.run(
                    self._client.cluster_client.request_job(self._graph.job_id), timeout=5
                )
            except Exception:
                continue
            running = sum(v.task_counts.get("RUNNING", 0) for v in info.vertices)
            finished = sum(v.task_counts.get("FINISHED", 0) for v in info.vertices)
            total = sum(v.parallelism for v in info.vertices)
            sources = [v for v in info.vertices if not any(e.target == v.id for e in self._graph.edges)]
            read = sum(v.records_out for v in sources)
            line = f"{info.status}: {running}/{total} tasks running, {finished} finished"
            now = time.monotonic()
            if line != last_line or now - last_print > self._interval:
                console.print(f"[dim]{line}, {_fmt_count(read)} records from sources[/dim]")
                last_line, last_print = line, now
            if info.status in ("FINISHED", "FAILED", "CANCELED"):
                return


class ProgressExecutor:
    """Embedded execution with progress lines for an interactive user."""

    def __init__(self, inner: EmbeddedExecutor) -> None:
        self._inner = inner
        self.clients: list[JobClient] = []

    def execute(self, job_graph: JobGraph) -> JobClient:
        console.print(f"Starting an embedded cluster and submitting job '{job_graph.job_name}'")
        client = self._inner.execute(job_graph)
        self.clients.append(client)
        console.print(f"Job has been submitted with JobID {job_graph.job_id}")
        reporter = ProgressReporter(client, job_graph)
        reporter.start()
        result = client.get_job_execution_result()

        def stop_when_done() -> None:
            result.exception()
            reporter.stop()

        threading.Thread(target=stop_when_done, daemon=True).start()
        return client


class DetachedExecutor:
    """Submits and returns at once: ``env.execute()`` gives back without waiting (``flott run -d``)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.clients: list[JobClient] = []

    def execute(self, job_graph: JobGraph) -> Any:
        client = self._inner.execute(job_graph)
        self.clients.append(client)
        click.echo(f"Job has been submitted with JobID {job_graph.job_id}")
        return _DetachedJobClient(client)


class _DetachedJobClient:
    def __init__(self, inner: JobClient) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def get_job_execution_result(self) -> CompletableFuture[Any]:
        from flott.common import JobExecutionResult

        done: concurrent.futures.Future[Any] = concurrent.futures.Future()
        done.set_result(JobExecutionResult(self._inner.get_job_id(), 0, {}))
        return CompletableFuture(done)


@contextlib.contextmanager
def client_python_files(config: Configuration) -> Iterator[list[str]]:
    """Make ``--pyFiles`` importable by the script itself, as PyFlink's client does.

    The files are laid out exactly as a TaskExecutor lays them out (a copy in a
    temporary directory, archives extracted), so what the script can import is
    what the job's functions will find on the cluster — and cloudpickle, seeing
    an importable module, ships references to it rather than copies.
    """
    scratch = Path(tempfile.mkdtemp(prefix="flott-pyfiles-"))
    entries: list[str] = []
    try:
        local = collect_local_artifacts(config.to_dict(), (), scratch, with_requirements=False)
        for index, artifact in enumerate(local):
            kind = artifact_kind(artifact.entry_name)
            if kind in ("file", "archive"):
                entry = str(materialize(kind, artifact.entry_name, artifact.path, scratch / "lib", index))
                if entry not in entries:
                    entries.append(entry)
        sys.path[:0] = entries
        yield entries
    finally:
        sys.path[:] = [p for p in sys.path if p not in entries]
        shutil.rmtree(scratch, ignore_errors=True)


def run_script(
    script: str, args: tuple[str, ...], config: Configuration, detached: bool, jobmanager: str | None = None
) -> int:
    path = Path(script)
    if not path.is_file():
        console.print(f"[red]error:[/red] no such script: {script}")
        return 2
    executor: Any
    if jobmanager is not None:
        from flott.client.rest_cluster_client import RestExecutor

        remote = RestExecutor(config, jobmanager)
        executor = DetachedExecutor(remote) if detached else _AttachedRemoteExecutor(remote)
    else:
        executor = ProgressExecutor(EmbeddedExecutor(config))
    old_argv = sys.argv
    sys.argv = [str(path), *args]
    sys.path.insert(0, str(path.resolve().parent))
    from flott.client import pipeline_executor

    pipeline_executor.set_context_configuration(config)
    try:
        with use_executor(executor), client_python_files(config):
            runpy.run_path(str(path), run_name="__main__")
    except KeyboardInterrupt:
        console.print("[yellow]Interrupted: cancelling the job[/yellow]")
        for c in executor.clients:
            _cancel_quietly(c)
        return 130
    except JobSubmissionError as e:
        console.print("The job could not be submitted.\n" + str(e), markup=False, style="red")
        return 1
    except FlottError as e:
        console.print("The job failed.\n" + str(e), markup=False, style="red")
        return 1
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
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


class _AttachedRemoteExecutor:
    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.clients: list[JobClient] = []

    def execute(self, job_graph: JobGraph) -> JobClient:
        client: JobClient = self._inner.execute(job_graph)
        self.clients.append(client)
        console.print(f"Job has been submitted with JobID {job_graph.job_id}")
        return client


def _cancel_quietly(client: JobClient) -> None:
    try:
        client.cancel().result(timeout=10)
    except Exception as e:  # the cluster is going down anyway
        _ = e
