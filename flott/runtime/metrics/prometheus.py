"""Flink's PrometheusReporter: every metric of the process on an HTTP endpoint Prometheus scrapes.

Configured as in Flink::

    metrics.reporter.prom.factory.class: org.apache.flink.metrics.prometheus.PrometheusReporterFactory
    metrics.reporter.prom.port: 9250-9260

Each process (the JobManager, every TaskExecutor) serves its own endpoint on
the first free port of the range (Flink's port syntax: ``9249``,
``9250-9260``, ``9250,9255-9257``), bound to the address the process binds
its RPC service to (``jobmanager.bind-host`` / ``taskmanager.bind-host``,
127.0.0.1 by default). Names and labels are Flink's: the metric name is
``flink_`` + the group's logical scope joined by ``_`` + the metric name
(``flink_taskmanager_job_task_numRecordsIn``), every character outside
``[a-zA-Z0-9:_]`` replaced by ``_``; the labels are the group's variables
without their angle brackets (``job_id``, ``job_name``, ``task_name``,
``subtask_index``, ``tm_id`` ...), their values filtered the same way unless
``filterLabelValueCharacters: false``. Counters, meters (their rate) and
numeric or boolean gauges are exported as Prometheus gauges, as Flink does;
gauges of other types (strings, distributions) are skipped.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from typing import Any

from flott.errors import ConfigurationError
from flott.metrics import Counter, Metric
from flott.runtime.metrics.groups import AbstractMetricGroup
from flott.runtime.metrics.metrics import FunctionGauge, MeterView

log = logging.getLogger(__name__)

FACTORY_CLASS = "org.apache.flink.metrics.prometheus.PrometheusReporterFactory"
DEFAULT_PORT = "9249"

_INVALID = re.compile(r"[^a-zA-Z0-9:_]")


def replace_invalid_chars(text: str) -> str:
    """Flink's AbstractPrometheusReporter character filter."""
    return _INVALID.sub("_", text)


def parse_port_range(spec: str, key: str) -> list[int]:
    """Flink's port syntax: single ports, ``a-b`` ranges, comma-separated."""
    ports: list[int] = []
    for item in (p.strip() for p in spec.split(",")):
        lo, sep, hi = item.partition("-")
        try:
            first, last = int(lo), int(hi) if sep else int(lo)
        except ValueError:
            raise ConfigurationError(
                f"{key}: expected a port or port range like '9250-9260', got {spec!r}"
            ) from None
        if not (0 <= first <= last <= 65535):
            raise ConfigurationError(f"{key}: port range {item!r} is outside 0-65535 or reversed")
        ports.extend(range(first, last + 1))
    return ports


def _value(metric: Metric) -> float | None:
    if isinstance(metric, Counter):
        return float(metric.get_count())
    if isinstance(metric, MeterView):
        return metric.get_rate()
    if isinstance(metric, FunctionGauge):
        value = metric.get_value()
        if isinstance(value, bool):
            return 1.0 if value else 0.0
        if isinstance(value, int | float):
            return float(value)
        return None
    return None


class _Family:
    """All metrics of one scoped name: one label set each."""

    def __init__(self, name: str, help_text: str, label_names: tuple[str, ...]) -> None:
        self.name = name
        self.help = help_text
        self.label_names = label_names
        self.children: dict[tuple[str, ...], Metric] = {}


class PrometheusReporter:
    """Told of every metric added or removed (a MetricReporter); collected when Prometheus scrapes
    (a prometheus-client collector). prometheus-client is imported only when a reporter is made:
    it costs half a second of start-up per process that reports nothing."""

    def __init__(self, ports: list[int], host: str, filter_label_values: bool = True) -> None:
        from prometheus_client.registry import CollectorRegistry

        self._ports = ports
        self._host = host
        self._filter_label_values = filter_label_values
        self._families: dict[str, _Family] = {}
        self._lock = threading.Lock()
        self._registry = CollectorRegistry(auto_describe=False)
        self._registry.register(self)  # type: ignore[arg-type]  # a collector by its collect()
        self._server: Any = None
        self.port: int | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def open(self) -> None:
        from prometheus_client import start_http_server

        for port in self._ports:
            try:
                self._server, _ = start_http_server(port, addr=self._host, registry=self._registry)
            except OSError:
                continue
            self.port = int(self._server.server_port)
            log.info("Started PrometheusReporter HTTP server on %s:%d", self._host, self.port)
            return
        # Flink logs and runs on without the reporter.
        log.error(
            "Could not start PrometheusReporter HTTP server on any configured port. Ports: %s",
            ",".join(map(str, self._ports)),
        )

    def close(self) -> None:
        server = self._server
        self._server = None
        if server is not None:
            server.shutdown()
            server.server_close()

    # -- MetricReporter ----------------------------------------------------------------------

    def _labels(self, group: AbstractMetricGroup) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        names: list[str] = []
        values: list[str] = []
        for key, value in group.get_all_variables().items():
            name = replace_invalid_chars(key[1:-1])
            if name in names:
                log.warning("Multiple metric group variables map to the label name %s; not reported.", name)
                return None
            names.append(name)
            values.append(replace_invalid_chars(value) if self._filter_label_values else value)
        return tuple(names), tuple(values)

    @staticmethod
    def _scoped_name(metric_name: str, group: AbstractMetricGroup) -> tuple[str, str]:
        scope = "_".join(replace_invalid_chars(c) for c in group.get_logical_scope())
        return f"flink_{scope}_{replace_invalid_chars(metric_name)}", scope

    def notify_of_added_metric(self, metric: Metric, metric_name: str, group: AbstractMetricGroup) -> None:
        labels = self._labels(group)
        if labels is None:
            return
        names, values = labels
        scoped, scope = self._scoped_name(metric_name, group)
        with self._lock:
            family = self._families.get(scoped)
            if family is None:
                family = self._families[scoped] = _Family(scoped, f"{metric_name} (scope: {scope})", names)
            elif family.label_names != names:
                log.warning("metric %s reported with different labels (%s); not reported.", scoped, names)
                return
            family.children[values] = metric

    def notify_of_removed_metric(self, metric: Metric, metric_name: str, group: AbstractMetricGroup) -> None:
        labels = self._labels(group)
        if labels is None:
            return
        scoped, _ = self._scoped_name(metric_name, group)
        with self._lock:
            family = self._families.get(scoped)
            if family is None:
                return
            if family.children.get(labels[1]) is metric:
                del family.children[labels[1]]
            if not family.children:
                del self._families[scoped]

    # -- Collector -----------------------------------------------------------------------------

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        with self._lock:
            families = [(f, list(f.children.items())) for f in self._families.values()]
        for family, children in families:
            out = GaugeMetricFamily(family.name, family.help, labels=list(family.label_names))
            for values, metric in children:
                try:
                    value = _value(metric)
                except Exception as e:  # a failing user gauge must not break the scrape
                    log.debug("gauge %s failed: %s", family.name, e)
                    continue
                if value is not None:
                    out.add_metric(list(values), value)
            yield out
