"""Where ``env.execute()`` sends its JobGraph (Flink's PipelineExecutor).

Outside any launcher a script gets a fresh embedded MiniCluster per job, shut
down when the job ends; ``flott run -m HOST`` installs a remote executor and
``flott info`` a plan-capturing one, through :func:`use_executor`.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any, Protocol

from flott.client.cluster_client import MiniClusterClient
from flott.client.loop_thread import LoopThread, shared_loop_thread
from flott.common.job_client import JobClient
from flott.configuration import Configuration
from flott.runtime.jobgraph import JobGraph
from flott.runtime.minicluster.mini_cluster import MiniCluster


class PipelineExecutor(Protocol):
    def execute(self, job_graph: JobGraph) -> JobClient: ...


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


class EmbeddedExecutor:
    """Runs each job on its own MiniCluster (one TaskExecutor process per slot)."""

    def __init__(self, configuration: Any = None, loop: LoopThread | None = None) -> None:
        self.config = _as_configuration(configuration)
        self.loop = loop or shared_loop_thread()
        self.last_cluster: MiniCluster | None = None

    def execute(self, job_graph: JobGraph) -> JobClient:
        job_graph.validate()
        wanted = self.config.get_int("local.number-taskmanager")
        n = max(wanted if wanted > 0 else (os.cpu_count() or 1), job_graph.slots_needed())
        cluster = MiniCluster(self.config, num_task_managers=n)
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
                await client.submit_job(job_graph)
            except BaseException:
                await close()
                raise
            return client

        client = self.loop.run(start_and_submit())
        return JobClient(job_graph.job_id, job_graph.job_name, client, self.loop, on_terminal=close)


_global_override: list[PipelineExecutor] = []


@contextlib.contextmanager
def use_executor(executor: PipelineExecutor) -> Iterator[PipelineExecutor]:
    """Make ``env.execute()`` in this block use ``executor`` (the CLI's launchers)."""
    _global_override.append(executor)
    try:
        yield executor
    finally:
        _global_override.remove(executor)


_context_configuration: list[Configuration] = []


def set_context_configuration(config: Configuration | None) -> None:
    """The launcher's configuration (``flott run -p/-D``) that environments created now start from."""
    _context_configuration.clear()
    if config is not None:
        _context_configuration.append(config)


def get_context_configuration() -> dict[str, str]:
    return _context_configuration[0].to_dict() if _context_configuration else {}


def get_pipeline_executor(configuration: Any = None) -> PipelineExecutor:
    if _global_override:
        return _global_override[-1]
    return EmbeddedExecutor(configuration)
