"""The REST endpoint's view of every process's metrics (Flink's MetricFetcher and MetricStore).

Metrics are pulled on demand, not pushed: the first metric request after
``metrics.fetcher.update-interval`` asks the leading Dispatcher once for the
JobManager's dump and every TaskManager's (each TaskExecutor answers from
its own registry, wherever it runs); requests within the interval share that
answer, and concurrent requests share one fetch. The store files the dumps
as Flink's MetricStore does: JobManager, TaskManager by id, job by id, and
per job and vertex the metrics of each subtask's current attempt.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from flott.rest.handler.handler import HandlerRequest
from flott.runtime.metrics.query_service import ClusterMetricDump

log = logging.getLogger(__name__)


@dataclass
class MetricStore:
    jobmanager: dict[str, str] = field(default_factory=dict)
    taskmanagers: dict[str, dict[str, str]] = field(default_factory=dict)
    jobs: dict[str, dict[str, str]] = field(default_factory=dict)
    subtasks: dict[tuple[str, str], dict[int, tuple[int, dict[str, str]]]] = field(default_factory=dict)
    """(job id, vertex id) → subtask index → (attempt number, metrics) of the newest attempt seen."""

    @classmethod
    def from_dump(cls, dump: ClusterMetricDump) -> MetricStore:
        store = cls(jobmanager=dict(dump.jobmanager.process), jobs=dict(dump.jobmanager.jobs))
        for tm_id, tm in dump.taskmanagers.items():
            store.taskmanagers[tm_id] = dict(tm.process)
            for task in tm.tasks:
                per_vertex = store.subtasks.setdefault((task.job_id, task.vertex_id), {})
                known = per_vertex.get(task.subtask_index)
                if known is None or known[0] <= task.attempt_number:
                    per_vertex[task.subtask_index] = (task.attempt_number, task.metrics)
        return store

    def subtask(self, job_id: str, vertex_id: str, index: int, attempt: int) -> dict[str, str] | None:
        """The live metrics of that attempt (None: it runs nowhere now, or is an older attempt)."""
        found = self.subtasks.get((job_id, vertex_id), {}).get(index)
        if found is None or found[0] != attempt:
            return None
        return found[1]


class MetricFetcher:
    def __init__(self, interval_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._interval = interval_s
        self._clock = clock
        self._store = MetricStore()
        self._fetched_at: float | None = None
        self._inflight: asyncio.Future[MetricStore] | None = None

    async def store(self, req: HandlerRequest) -> MetricStore:
        now = self._clock()
        if self._fetched_at is not None and now - self._fetched_at < self._interval:
            return self._store
        if self._inflight is not None:
            return await asyncio.shield(self._inflight)
        loop = asyncio.get_running_loop()
        self._inflight = future = loop.create_future()
        try:
            dump = await (await req.gateway()).request_metric_dumps()
            self._store = MetricStore.from_dump(dump)
            self._fetched_at = self._clock()
        except Exception as e:
            # Flink's fetcher logs and serves what it has; a REST call must not fail for metrics.
            log.debug("fetching metrics failed: %s", e)
        finally:
            self._inflight = None
            future.set_result(self._store)
        return self._store


async def fetched_metrics(req: HandlerRequest) -> MetricStore:
    """The endpoint's store, refreshed if older than ``metrics.fetcher.update-interval``."""
    fetcher = req.context.extras.get("metric_fetcher")
    if fetcher is None:
        fetcher = req.context.extras["metric_fetcher"] = MetricFetcher(
            req.config.get_seconds("metrics.fetcher.update-interval")
        )
    assert isinstance(fetcher, MetricFetcher)
    return await fetcher.store(req)
