"""Metric groups with Flink's scopes (Flink's AbstractMetricGroup, GenericMetricGroup,
GenericKeyMetricGroup/GenericValueMetricGroup, InternalOperatorMetricGroup, TaskMetricGroup).

Every group knows two names for what it holds:

* the **metric identifier** a reporter uses, Flink's default operator scope
  ``<host>.taskmanager.<tm_id>.<job_name>.<operator_name>.<subtask_index>``
  followed by the user's groups (a key/value group contributes ``key.value``)
  and the metric's name;
* the **query-scope name** the REST API lists under a vertex: the operator's
  name, the user's groups and the metric's name, each with ``space : . ,``
  replaced by ``_`` as Flink's MetricQueryService does (REST then prefixes
  ``<subtask_index>.``).

PyFlink semantics where they differ from Java Flink: asking twice for a
counter (meter, distribution) of the same name in the same group returns
the same metric, since PyFlink's metrics are Beam cells keyed by
namespace and name.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from flott.common.java_text import java_double_to_string
from flott.metrics import Counter, Distribution, Meter, Metric, MetricGroup
from flott.runtime.metrics.metrics import DistributionImpl, FunctionGauge, MeterView, SimpleCounter, View
from flott.runtime.metrics.registry import MetricRegistry

log = logging.getLogger(__name__)

METRICS_OPERATOR_NAME_MAX_LENGTH = 80
"""Flink truncates operator names to this length in metric scopes (and warns)."""

_QUERY_FILTER = str.maketrans({" ": "_", ".": "_", ":": "_", ",": "_"})


def query_filter(text: str) -> str:
    """Flink's MetricQueryService character filter: ``space : . ,`` become ``_``."""
    return text.translate(_QUERY_FILTER)


class AbstractMetricGroup(MetricGroup):
    """A node of the metric tree: its scope components, query scope, variables and metrics."""

    def __init__(
        self,
        registry: MetricRegistry,
        scope: tuple[str, ...],
        query_scope: tuple[str, ...],
        variables: dict[str, str],
        logical_scope: tuple[str, ...] = (),
    ) -> None:
        self._registry = registry
        self._scope = scope
        self._query_scope = query_scope
        self._variables = variables
        self._logical_scope = logical_scope
        self._metrics: dict[str, Metric] = {}
        self._groups: dict[tuple[str, bool], AbstractMetricGroup] = {}
        self._closed = False

    # -- naming --------------------------------------------------------------------------------

    def get_scope_components(self) -> tuple[str, ...]:
        return self._scope

    def get_all_variables(self) -> dict[str, str]:
        """Flink's scope variables (``<host>``, ``<job_name>``, user key groups ...) of this group."""
        return dict(self._variables)

    def get_logical_scope(self) -> tuple[str, ...]:
        """Flink's logical scope (``taskmanager.job.task.operator`` plus user groups; a key/value
        group contributes its key only): what a Prometheus metric name is made of."""
        return self._logical_scope

    def get_metric_identifier(self, metric_name: str) -> str:
        return ".".join((*self._scope, metric_name))

    def query_name(self, metric_name: str) -> str:
        """The metric's name as the REST API lists it under its subtask."""
        return ".".join((*self._query_scope, query_filter(metric_name)))

    # -- subgroups -----------------------------------------------------------------------------

    def add_group(self, name: str, extra: str | None = None) -> MetricGroup:
        name = str(name)
        if extra is None:
            return self._child(name, False, {})
        key_group = self._child(name, True, {})
        return key_group._child(str(extra), False, {f"<{name}>": str(extra)}, in_logical_scope=False)

    def _child(
        self, name: str, is_key: bool, extra_variables: dict[str, str], in_logical_scope: bool = True
    ) -> AbstractMetricGroup:
        found = self._groups.get((name, is_key))
        if found is None:
            found = self._groups[(name, is_key)] = AbstractMetricGroup(
                self._registry,
                (*self._scope, name),
                (*self._query_scope, query_filter(name)),
                {**self._variables, **extra_variables},
                (*self._logical_scope, name) if in_logical_scope else self._logical_scope,
            )
        return found

    def metric(self, name: str, metric: Metric) -> None:
        """Register a metric object made elsewhere (system metrics: IO counters, rates, gauges)."""
        if not self._closed:
            self._metrics[name] = metric
            self._registry.register(metric, name, self)

    # -- metrics -------------------------------------------------------------------------------

    def _register(self, name: str, create: Callable[[], Metric], kind: type) -> Any:
        name = str(name)
        existing = self._metrics.get(name)
        if existing is not None:
            if isinstance(existing, kind):
                return existing
            log.warning(
                "Name collision: group %s already contains a %s named '%s'; the new %s is not reported.",
                ".".join(self._scope), type(existing).__name__, name, kind.__name__,
            )
            return create()
        metric = create()
        if not self._closed:
            self._metrics[name] = metric
            self._registry.register(metric, name, self)
        return metric

    def counter(self, name: str) -> Counter:
        counter: Counter = self._register(name, SimpleCounter, SimpleCounter)
        return counter

    def gauge(self, name: str, obj: Callable[[], int]) -> None:
        gauge = FunctionGauge(obj)
        name = str(name)
        if name in self._metrics:
            self._registry.unregister(self._metrics[name], name, self)
        if not self._closed:
            self._metrics[name] = gauge
            self._registry.register(gauge, name, self)

    def meter(self, name: str, time_span_in_seconds: int = 60) -> Meter:
        clock = self._registry.clock
        meter: Meter = self._register(
            name, lambda: MeterView(time_span_in_seconds, clock()), MeterView
        )
        return meter

    def distribution(self, name: str) -> Distribution:
        dist: Distribution = self._register(name, DistributionImpl, DistributionImpl)
        return dist

    # -- reading and closing -------------------------------------------------------------------

    def dump(self, out: dict[str, str], now: float) -> None:
        """Add ``query name → value`` of this group's and its subgroups' metrics to ``out``."""
        # copies: the task's thread may register metrics (open()) while the heartbeat reads them
        for name, metric in list(self._metrics.items()):
            try:
                value = metric_value(metric, now)
            except Exception as e:  # a failing user gauge must not break reporting
                log.debug("gauge %s failed: %s", self.get_metric_identifier(name), e)
                continue
            out[self.query_name(name)] = value
        for group in list(self._groups.values()):
            group.dump(out, now)

    def close(self) -> None:
        """Unregister everything (the task ended); later registrations are not reported."""
        if self._closed:
            return
        self._closed = True
        for name, metric in self._metrics.items():
            self._registry.unregister(metric, name, self)
        for group in self._groups.values():
            group.close()


def metric_value(metric: Metric, now: float) -> str:
    """A metric's value as Flink's metric dump carries it (a string)."""
    if isinstance(metric, Counter):
        return str(metric.get_count())
    if isinstance(metric, MeterView):
        return java_double_to_string(metric.get_rate())
    if isinstance(metric, FunctionGauge):
        return gauge_text(metric.get_value())
    return str(metric)


def gauge_text(value: Any) -> str:
    """Java's ``toString`` of a gauge's value (booleans lower-case, doubles as Java prints them)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_to_string(value)
    return str(value)


LONG_MIN_VALUE = -(2**63)
"""What a watermark gauge shows before the first watermark (Flink's WatermarkGauge: Long.MIN_VALUE)."""


class TaskMetricGroup:
    """One subtask attempt's metrics: the task's own (IO, time shares, input watermark) and an
    operator group per operator of its chain.

    ``dump`` (operator metrics) is what the TaskExecutor's heartbeat carries to
    the JobMaster; ``query_dump`` (task and operator metrics) is what the
    TaskExecutor's metric query service answers.
    """

    def __init__(
        self,
        registry: MetricRegistry,
        host: str,
        tm_id: str,
        job_id: str,
        job_name: str,
        task_name: str,
        subtask_index: int,
        attempt_number: int,
        *,
        vertex_id: str = "",
        execution_id: str = "",
    ) -> None:
        self.registry = registry
        self._scope = (host, "taskmanager", tm_id, job_name)
        self._subtask_index = subtask_index
        self.job_id = job_id
        self.vertex_id = vertex_id
        self.subtask_index = subtask_index
        self.attempt_number = attempt_number
        self._variables = {
            "<host>": host,
            "<tm_id>": tm_id,
            "<job_id>": job_id,
            "<job_name>": job_name,
            "<task_id>": vertex_id,
            "<task_attempt_id>": execution_id,
            "<task_name>": task_name,
            "<subtask_index>": str(subtask_index),
            "<task_attempt_num>": str(attempt_number),
        }
        self.task = AbstractMetricGroup(
            registry,
            (*self._scope, task_name, str(subtask_index)),
            (),
            dict(self._variables),
            ("taskmanager", "job", "task"),
        )
        """The task scope (Flink's TaskMetricGroup/TaskIOMetricGroup): ``numRecordsIn`` ..."""
        self._operators: dict[str, AbstractMetricGroup] = {}
        self._dump_lock = threading.Lock()
        """Dumps come from the heartbeat, the query service and, once, from the ending task's thread."""
        self._closed = False
        self._views: list[View] = []
        registry.add_task_group(self)

    def add_view(self, view: View) -> None:
        """A view the registry updates while the task lives (e.g. the task's time shares)."""
        self._views.append(view)
        self.registry.add_view(view)

    def get_or_add_operator(self, operator_id: str, operator_name: str) -> AbstractMetricGroup:
        """The operator's group (one per operator, shared by every function the operator calls)."""
        group = self._operators.get(operator_id)
        if group is None:
            name = operator_name
            if len(name) > METRICS_OPERATOR_NAME_MAX_LENGTH:
                log.warning(
                    "The operator name %s exceeded the %d characters length limit and was truncated.",
                    name, METRICS_OPERATOR_NAME_MAX_LENGTH,
                )
                name = name[:METRICS_OPERATOR_NAME_MAX_LENGTH]
            group = self._operators[operator_id] = AbstractMetricGroup(
                self.registry,
                (*self._scope, name, str(self._subtask_index)),
                (query_filter(name),),
                {**self._variables, "<operator_id>": operator_id, "<operator_name>": name},
                ("taskmanager", "job", "task", "operator"),
            )
        return group

    def _dump_groups(self, groups: list[AbstractMetricGroup]) -> dict[str, str]:
        out: dict[str, str] = {}
        with self._dump_lock:
            try:
                now = self.registry.clock()
                for group in groups:
                    group.dump(out, now)
            except Exception as e:
                log.warning("reading the metrics of %s failed: %s", self._variables["<task_name>"], e)
        return out

    def dump(self) -> dict[str, str]:
        """The operators' metrics by query name; never raises (it runs inside the heartbeat)."""
        if not self._operators:
            return {}
        return self._dump_groups(list(self._operators.values()))

    def query_dump(self) -> dict[str, str]:
        """Task metrics (``numRecordsIn``) and operator metrics (``<operator>.<name>``)."""
        return self._dump_groups([self.task, *list(self._operators.values())])

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.registry.remove_task_group(self)
        for view in self._views:
            self.registry.remove_view(view)
        self.task.close()
        for group in self._operators.values():
            group.close()
