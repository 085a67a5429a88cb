"""The JobManager's cluster gauges under Flink's names (jobmanager scope: ``<host>.jobmanager.*``).

=============================  ================================================================
``numRegisteredTaskManagers``  TaskExecutors registered with the ResourceManager
``taskSlotsTotal``             their slots
``taskSlotsAvailable``         their free slots
``numRunningJobs``             jobs running under a JobMaster of this Dispatcher
=============================  ================================================================

Flink's ResourceManager registers the first three on its own state; flott's Dispatcher reaches
its ResourceManager only through its gateway (in HA mode the two are re-created per leadership),
so the Dispatcher asks it every :data:`REFRESH_INTERVAL_S` and right before each metric dump
(``GET /jobmanager/metrics`` shows the values of that moment); a reporter (Prometheus) sees
values at most that old.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from flott.errors import FlottError
from flott.runtime.messages.cluster import TaskExecutorInfo
from flott.runtime.metrics.groups import AbstractMetricGroup

log = logging.getLogger(__name__)

REFRESH_INTERVAL_S = 1.0


class ClusterGauges:
    """The gauges' values (see the module docstring) and how they are kept fresh."""

    def __init__(
        self,
        group: AbstractMetricGroup,
        running_jobs: Callable[[], int],
        task_executors: Callable[[], Awaitable[list[TaskExecutorInfo]]],
    ) -> None:
        self.task_managers = 0
        self.slots_total = 0
        self.slots_available = 0
        self._task_executors = task_executors
        group.gauge("numRegisteredTaskManagers", lambda: self.task_managers)
        group.gauge("taskSlotsTotal", lambda: self.slots_total)
        group.gauge("taskSlotsAvailable", lambda: self.slots_available)
        group.gauge("numRunningJobs", running_jobs)

    def update(self, infos: list[TaskExecutorInfo]) -> None:
        self.task_managers = len(infos)
        self.slots_total = sum(i.num_slots for i in infos)
        self.slots_available = sum(i.free_slots for i in infos)

    async def refresh(self) -> None:
        try:
            self.update(await self._task_executors())
        except FlottError as e:  # the ResourceManager is stopping or not yet serving
            log.debug("cluster gauges not refreshed: %s", e)

    async def run(self, interval_s: float = REFRESH_INTERVAL_S) -> None:
        while True:
            await self.refresh()
            await asyncio.sleep(interval_s)


__all__ = ["ClusterGauges"]
