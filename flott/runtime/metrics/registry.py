"""A process's metric registry (Flink's MetricRegistryImpl, reduced to its contract).

Groups tell the registry of every metric they add or remove, with the
group, so that each reporter (Prometheus: :mod:`flott.runtime.metrics.prometheus`)
sees each metric once with its full scope and variables. The registry also
keeps what Flink's ViewUpdater and MetricQueryService need: the metrics that
are :class:`~flott.runtime.metrics.metrics.View`\\ s (updated every
:data:`~flott.runtime.metrics.metrics.UPDATE_INTERVAL_SECONDS` by
:meth:`update_views`) and the groups a dump answers with (the process group,
the JobManager's job groups, the TaskExecutor's task groups).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from flott.runtime.metrics.metrics import UPDATE_INTERVAL_SECONDS, View

if TYPE_CHECKING:
    from flott.metrics import Metric
    from flott.runtime.metrics.groups import AbstractMetricGroup, TaskMetricGroup

log = logging.getLogger(__name__)


class MetricReporter(Protocol):
    """Flink's MetricReporter: told of every metric added or removed, with its group."""

    def notify_of_added_metric(
        self, metric: Metric, metric_name: str, group: AbstractMetricGroup
    ) -> None: ...

    def notify_of_removed_metric(
        self, metric: Metric, metric_name: str, group: AbstractMetricGroup
    ) -> None: ...


class MetricRegistry:
    """One per JobManager or TaskExecutor process; ``clock`` (seconds, monotonic) times rates."""

    def __init__(
        self, reporters: list[MetricReporter] | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.reporters = list(reporters or [])
        self.clock = clock
        self._lock = threading.Lock()
        """Task threads register metrics (``open()``) while the updater and dumps read them."""
        self._views: set[View] = set()
        self._task_groups: set[TaskMetricGroup] = set()
        self.process_group: AbstractMetricGroup | None = None
        """The process scope (``jobmanager`` or ``taskmanager``): ``Status.JVM.*`` ..."""
        self.job_groups: dict[str, AbstractMetricGroup] = {}
        """The JobManager's job scope, per running job: ``uptime``, checkpoint figures ..."""

    def register(self, metric: Metric, metric_name: str, group: AbstractMetricGroup) -> None:
        if isinstance(metric, View):
            self.add_view(metric)
        for reporter in self.reporters:
            try:
                reporter.notify_of_added_metric(metric, metric_name, group)
            except Exception as e:  # a reporter's bug must not fail the user's open()
                log.warning("metric reporter %r failed on an added metric: %s", reporter, e)

    def unregister(self, metric: Metric, metric_name: str, group: AbstractMetricGroup) -> None:
        if isinstance(metric, View):
            self.remove_view(metric)
        for reporter in self.reporters:
            try:
                reporter.notify_of_removed_metric(metric, metric_name, group)
            except Exception as e:
                log.warning("metric reporter %r failed on a removed metric: %s", reporter, e)

    # -- views (Flink's ViewUpdater) -----------------------------------------------------------

    def add_view(self, view: View) -> None:
        with self._lock:
            self._views.add(view)

    def remove_view(self, view: View) -> None:
        with self._lock:
            self._views.discard(view)

    def update_views(self, now: float | None = None) -> None:
        """Sample every view (rates, time shares) at ``now``; one failing view skips only itself."""
        when = self.clock() if now is None else now
        with self._lock:
            views = list(self._views)
        for view in views:
            try:
                view.update(when)
            except Exception as e:
                log.debug("updating metric view %r failed: %s", view, e)

    async def run_view_updater(self, interval_s: float = UPDATE_INTERVAL_SECONDS) -> None:
        """Update the views every ``interval_s`` until cancelled (on the process's event loop)."""
        while True:
            await asyncio.sleep(interval_s)
            self.update_views()

    # -- what a dump answers with ------------------------------------------------------------

    def add_task_group(self, group: TaskMetricGroup) -> None:
        with self._lock:
            self._task_groups.add(group)

    def remove_task_group(self, group: TaskMetricGroup) -> None:
        with self._lock:
            self._task_groups.discard(group)

    def task_groups(self) -> list[TaskMetricGroup]:
        with self._lock:
            return list(self._task_groups)
