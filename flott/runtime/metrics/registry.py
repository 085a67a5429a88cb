"""The TaskExecutor's metric registry (Flink's MetricRegistryImpl, reduced to its contract).

Groups tell the registry of every metric they add or remove, with the
group, so that a reporter sees each metric once with its full identifier
and variables. No reporter is configured yet (``metrics.reporters`` is a
later step); the REST path reads metrics through the task's group dump,
not through here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from flott.metrics import Metric
    from flott.runtime.metrics.groups import AbstractMetricGroup

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
    """One per TaskExecutor process; ``clock`` (seconds, monotonic) times meter rates."""

    def __init__(
        self, reporters: list[MetricReporter] | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.reporters = list(reporters or [])
        self.clock = clock

    def register(self, metric: Metric, metric_name: str, group: AbstractMetricGroup) -> None:
        for reporter in self.reporters:
            try:
                reporter.notify_of_added_metric(metric, metric_name, group)
            except Exception as e:  # a reporter's bug must not fail the user's open()
                log.warning("metric reporter %r failed on an added metric: %s", reporter, e)

    def unregister(self, metric: Metric, metric_name: str, group: AbstractMetricGroup) -> None:
        for reporter in self.reporters:
            try:
                reporter.notify_of_removed_metric(metric, metric_name, group)
            except Exception as e:
                log.warning("metric reporter %r failed on a removed metric: %s", reporter, e)
