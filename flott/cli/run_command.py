"""``flott run``: run a PyFlink-style script, on an embedded cluster or (``-m``) a remote one.

The script runs in this process in plan mode: its ``env.execute()`` builds the
JobGraph and hands it to the executor this command installs. Progress goes to
stderr, so the job's own stdout (``print()`` sinks) stays clean.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
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

import flott
from flott.cli.run_options import ProgramEntry
from flott.client import pipeline_executor
from flott.client.pipeline_executor import EmbeddedExecutor, use_executor
from flott.client.user_errors import format_user_error
from flott.common import JobExecutionResult
from flott.common.completable_future import CompletableFuture
from flott.common.job_client import JobClient
from flott.configuration import Configuration
from flott.errors import (
    ConfigurationError,
    FlottError,
    JobExecutionError,
    JobSubmissionError,
    NotYetSupportedError,
)
from flott.runtime.blob.python_artifacts import artifact_kind, collect_local_artifacts, materialize
from flott.runtime.jobgraph import JobGraph
from flott.runtime.metrics.groups import query_filter
from flott.runtime.metrics.query_service import vertex_total

console = Console(stderr=True, highlight=False, soft_wrap=True)


def _fmt_count(n: int) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= div:
            return f"{n / div:.1f}{unit}"
    return str(n)


def _fmt_rate(per_second: float) -> str:
    return f"{_fmt_count(int(per_second))}/s"


class ProgressReporter:
    """Prints a line whenever the job's state changes, and every few seconds the records the
    sources emitted with their live rate (the sources' ``numRecordsOutPerSecond``: Flink's
    one-minute meter, refreshed every 5 s)."""

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
                rate = ""
                live = self._source_figures({v.id for v in sources})
                if live is not None:
                    read = max(read, int(live[0]))
                    rate = f" ({_fmt_rate(live[1])})" if running else ""
                console.print(f"[dim]{line}, {_fmt_count(read)} records from sources{rate}[/dim]")
                last_line, last_print = line, now
            if info.status in ("FINISHED", "FAILED", "CANCELED"):
                return


    def _source_figures(self, source_ids: set[str]) -> tuple[float, float] | None:
        """(records emitted, records emitted per second) by the running source operators, None if
        the cluster client cannot tell."""
        request = getattr(self._client.cluster_client, "request_metric_dumps", None)
        if request is None:
            return None
        try:
            dump = self._client.loop.run(request(), timeout=5)
        except Exception:
            return None
        job_id = self._graph.job_id
        heads = {v.id: query_filter(v.operators[0].name) for v in self._graph.vertices
                 if v.id in source_ids and v.operators}
        return (
            vertex_total(dump, job_id, {v: f"{op}.numRecordsOut" for v, op in heads.items()}),
            vertex_total(dump, job_id, {v: f"{op}.numRecordsOutPerSecond" for v, op in heads.items()}),
        )


class ProgressExecutor:
    """Embedded execution with progress lines for an interactive user."""

    def __init__(self, inner: EmbeddedExecutor) -> None:
        self._inner = inner
        self.clients: list[JobClient] = []

    def execute(self, job_graph: JobGraph) -> JobClient:
        console.print(f"Starting an embedded cluster and submitting job '{job_graph.job_name}'", markup=False)
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


NO_JOB_MESSAGE = (
    "The program didn't contain a job. Perhaps you forgot to call execute() on the execution environment."
)


def run_entry(
    entry: ProgramEntry,
    config: Configuration,
    detached: bool,
    jobmanager: str | None = None,
    token: str | None = None,
) -> int:
    """``flott run``: the program in plan mode, its jobs on an embedded cluster or at ``jobmanager``."""
    executor: Any
    if jobmanager is not None:
        from flott.client.rest_cluster_client import RestExecutor  # deferred: aiohttp, ~0.3 s of `flott run`

        remote = RestExecutor(config, jobmanager, token=token)
        executor = DetachedExecutor(remote) if detached else _AttachedRemoteExecutor(remote)
    else:
        executor = ProgressExecutor(EmbeddedExecutor(config))
    code = execute_program(entry, config, executor)
    if code is not None:
        return code
    for c in executor.clients:
        if detached:
            c.loop.run(c.cluster_client.close())
        else:
            status = c.get_job_status().result(timeout=10).name
            console.print(f"Job {c.get_job_id()} {status}")
    return 0


def execute_program(entry: ProgramEntry, config: Configuration, executor: Any) -> int | None:
    """Run the program with ``executor`` taking its jobs; an exit code if it did not end well.

    What a user got wrong (a failing import, a bad value, a feature flott lacks, a failed job)
    is one message on stderr and exit code 1; ``-v`` adds the traceback, cut to the program's
    own frames. A program that submitted no job fails as in Flink.
    """
    if entry.kind == "script" and not Path(entry.target).is_file():
        console.print(f"error: no such script: {entry.target}", markup=False, style="red")
        return 2
    old_argv, old_path = sys.argv, list(sys.path)
    if entry.kind == "script":
        sys.argv = [entry.target, *entry.args]
        sys.path.insert(0, str(Path(entry.target).resolve().parent))
    else:
        sys.argv = [entry.target, *entry.args]
        sys.path.insert(0, os.getcwd())
    pipeline_executor.set_context_configuration(config)
    try:
        with use_executor(executor), client_python_files(config):
            if entry.kind == "script":
                runpy.run_path(entry.target, run_name="__main__")
            else:
                runpy.run_module(entry.target, run_name="__main__", alter_sys=True)
    except KeyboardInterrupt:
        console.print("Interrupted: cancelling the job", markup=False, style="yellow")
        for c in executor.clients:
            _cancel_quietly(c)
        return 130
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except Exception as e:  # every failure of the program ends as a message
        report_program_failure(e, entry)
        return 1
    finally:
        sys.argv = old_argv
        sys.path[:] = old_path
        pipeline_executor.set_context_configuration(None)
    if not executor.clients:
        console.print(NO_JOB_MESSAGE, markup=False, style="red")
        return 1
    return None


def failure_headline(error: BaseException, entry: ProgramEntry) -> str:
    """What went wrong in the program, in one message naming the program's own frame."""

    where = program_frame(error, entry)
    at = f" ({where})" if where else ""
    if isinstance(error, JobSubmissionError):
        return f"The job could not be submitted: {error}"
    if isinstance(error, JobExecutionError):
        return str(error)
    if isinstance(error, NotYetSupportedError):
        return f"{error}{at}"
    if isinstance(error, ConfigurationError):
        return f"Invalid configuration: {error}{at}"
    if isinstance(error, FlottError):
        return f"{type(error).__name__}: {error}{at}"
    return f"The program failed{at}: {type(error).__name__}: {error}"


def report_program_failure(error: BaseException, entry: ProgramEntry) -> None:
    """One message saying what went wrong (``-v``: and where, in the program's own frames)."""
    from flott.cli.options import verbosity

    headline = failure_headline(error, entry)
    verbose = verbosity() > 0
    if not verbose and not isinstance(error, JobExecutionError):
        headline += f"{_hint(error)} (-v shows the traceback)"
    console.print(headline, markup=False, style="red")
    if verbose:
        if isinstance(error, FlottError):
            sys.stderr.write(format_user_error(error))
        else:
            sys.stderr.write(user_traceback(error, entry))


def _hint(error: BaseException) -> str:
    """What to do about the commonest mistakes, as a clause after the message."""
    if isinstance(error, ModuleNotFoundError):
        return "; install it for this interpreter, or ship it with -pyfs / -pyreq"
    if isinstance(error, SyntaxError):
        return "; fix the program's syntax"
    return ""


def _own_frames(error: BaseException, entry: ProgramEntry) -> Any:
    """The traceback from the program's first frame on (this launcher's frames left out)."""
    tb = error.__traceback__
    first = tb
    while tb is not None:
        if _is_program_file(tb.tb_frame.f_code.co_filename, entry):
            return tb
        tb = tb.tb_next
    return first


def _is_program_file(filename: str, entry: ProgramEntry) -> bool:
    if entry.kind == "script":
        return Path(filename).resolve() == Path(entry.target).resolve()
    return not filename.startswith("<") and not _in_launcher(filename)


def _in_launcher(filename: str) -> bool:
    import click as click_module

    here = Path(filename).resolve()
    roots = (Path(__file__).resolve().parent, Path(click_module.__file__).resolve().parent)
    return any(here.is_relative_to(r) for r in roots) or "runpy" in here.name


def program_frame(error: BaseException, entry: ProgramEntry) -> str:
    """``file, line N`` of the program's innermost own frame where ``error`` came through."""
    tb = _own_frames(error, entry)
    where = ""
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not _in_flott(filename) and not filename.startswith("<"):
            where = f"{Path(filename).name}, line {tb.tb_lineno}"
        tb = tb.tb_next
    return where


def _in_flott(filename: str) -> bool:
    return Path(filename).resolve().is_relative_to(Path(flott.__file__).resolve().parent)


def user_traceback(error: BaseException, entry: ProgramEntry) -> str:
    import traceback

    return "".join(traceback.format_exception(type(error), error, _own_frames(error, entry)))


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
