"""Where ``env.execute()`` sends its JobGraph (Flink's PipelineExecutor implementations).

The environment finds its executor through :mod:`flott.api.execution` (Flink's
PipelineExecutorServiceLoader, by ``execution.target``); this module is the ``local`` one.
Outside any launcher a script gets a fresh embedded MiniCluster per job, shut
down when the job ends (the job's ``python.files`` and ``python.requirements``
go through that cluster's BlobServer, as they would on a remote one);
``flott run -m HOST`` installs a remote executor and ``flott info`` a
plan-capturing one, through :func:`use_executor`.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flott.api.execution import (  # noqa: F401 - the launchers' API, defined on the floor below
    PipelineExecutor,
    get_context_configuration,
    get_pipeline_executor,
    set_context_configuration,
    use_executor,
)
from flott.client.cluster_client import MiniClusterClient
from flott.client.loop_thread import LoopThread, shared_loop_thread
from flott.common.job_client import JobClient
from flott.configuration import Configuration
from flott.errors import NotYetSupportedError
from flott.runtime.blob.python_artifacts import collect_local_artifacts, describe_local_artifacts
from flott.runtime.entrypoint.runtime_logging import LOG_FILE, ensure_client_logging
from flott.runtime.jobgraph import JobGraph
from flott.runtime.messages.job_artifacts import JobArtifact
from flott.runtime.minicluster.mini_cluster import MiniCluster


def _as_configuration(configuration: Any) -> Configuration:
    if configuration is None:
        return Configuration()
    if isinstance(configuration, Configuration):
        return configuration
    if hasattr(configuration, "to_dict"):
        return Configuration({str(k): str(v) for k, v in configuration.to_dict().items()})
    return Configuration({str(k): str(v) for k, v in dict(configuration).items()})


_live_clusters: set[MiniCluster] = set()
_live_lock = threading.Lock()


def _close_live_clusters() -> None:
    loop = shared_loop_thread()
    for cluster in list(_live_clusters):
        with contextlib.suppress(Exception):
            loop.run(cluster.close(), timeout=10)


atexit.register(_close_live_clusters)


def refuse_unshippable_python_options(config: Mapping[str, str], embedded: bool) -> None:
    """Refuse, before anything starts, PyFlink's Python options flott cannot carry out.

    ``python.archives`` (``add_python_archive``, ``-pyarch``) are extracted into the Python
    worker's working directory in Flink; a flott TaskExecutor runs every job's functions in
    its one process, with one working directory. ``pipeline.cached-files``
    (``register_cached_file``) needs a distributed cache flott does not have. A
    ``python.executable`` (``set_python_executable``, ``-pyexec``) other than the interpreter the
    TaskExecutors run cannot be switched to: on the embedded cluster that is this interpreter
    (so naming it is fine), on a remote cluster flott cannot tell, so any is refused.
    """
    if config.get("python.archives", "").strip():
        raise NotYetSupportedError(
            f"python.archives ({config['python.archives']}; add_python_archive, -pyarch): flott cannot "
            "ship archives to the TaskExecutors' working directory; ship Python code with "
            "add_python_file / -pyfs, and read data from a path every TaskExecutor can reach"
        )
    if config.get("pipeline.cached-files", "").strip():
        raise NotYetSupportedError(
            "pipeline.cached-files (register_cached_file): flott has no distributed cache; read the "
            "file from a path every TaskExecutor can reach"
        )
    executable = config.get("python.executable", "").strip()
    if executable and not (embedded and _same_file(executable, sys.executable)):
        where = f"this interpreter ({sys.executable})" if embedded else "the cluster's interpreter"
        raise NotYetSupportedError(
            f"python.executable {executable} (set_python_executable, -pyexec): a job's functions run "
            f"in {where}, flott cannot switch them to another; start the TaskExecutors with the "
            "Python you want"
        )


def _same_file(a: str, b: str) -> bool:
    found = shutil.which(a) or a
    try:
        return os.path.samefile(found, b)
    except OSError:
        return False


class EmbeddedExecutor:
    """Runs each job on its own MiniCluster (one TaskExecutor process per slot)."""

    def __init__(self, configuration: Any = None, loop: LoopThread | None = None) -> None:
        self.config = _as_configuration(configuration)
        self.loop = loop or shared_loop_thread()
        self.last_cluster: MiniCluster | None = None

    def execute(self, job_graph: JobGraph) -> JobClient:
        job_graph.validate()
        refuse_unshippable_python_options(job_graph.config, embedded=True)
        # The job's Python files are read in place (zipped directories go to a scratch
        # directory): the embedded JobManager is this process, its BlobServer copies
        # them before the job starts. A missing file fails here, before any process starts.
        scratch = Path(tempfile.mkdtemp(prefix="flott-submit-"))
        try:
            artifacts = describe_local_artifacts(collect_local_artifacts(job_graph.config, (), scratch))
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        try:
            return self._execute(job_graph, artifacts)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _execute(self, job_graph: JobGraph, artifacts: list[JobArtifact]) -> JobClient:
        wanted = self.config.get_int("local.number-taskmanager")
        n = max(wanted if wanted > 0 else (os.cpu_count() or 1), job_graph.slots_needed())
        # the embedded cluster's log goes to a file, and its TaskExecutors log to the same one
        log_path = ensure_client_logging(self.config)
        config = self.config
        if not config.contains(LOG_FILE):
            config = config.with_overrides({LOG_FILE: str(log_path)})
        cluster = MiniCluster(config, num_task_managers=n)
        self.last_cluster = cluster
        with _live_lock:
            _live_clusters.add(cluster)

        async def close() -> None:
            await cluster.close()
            with _live_lock:
                _live_clusters.discard(cluster)

        async def start_and_submit() -> MiniClusterClient:
            try:
                await cluster.start()
                client = MiniClusterClient(cluster)
                if artifacts:
                    await cluster.dispatcher_gateway().submit_job_with_artifacts(job_graph, artifacts)
                else:
                    await client.submit_job(job_graph)
            except BaseException:
                await close()
                raise
            return client

        client = self.loop.run(start_and_submit())
        return JobClient(job_graph.job_id, job_graph.job_name, client, self.loop, on_terminal=close)
