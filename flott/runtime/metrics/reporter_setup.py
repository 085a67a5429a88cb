"""Reporters from the configuration (Flink's ReporterSetup) and a process's registry.

A reporter named ``NAME`` is configured under ``metrics.reporter.NAME.*``; if
``metrics.reporters`` is set, only the reporters it lists are started (as in
Flink). The one factory flott has is Flink's
``org.apache.flink.metrics.prometheus.PrometheusReporterFactory``; any other
factory, a reporter without ``factory.class``, and keys the reporter does not
know are refused when the process starts, naming the key, rather than
accepted and ignored.
"""

from __future__ import annotations

import socket

from flott.configuration import Configuration
from flott.errors import ConfigurationError
from flott.runtime.metrics.process_metrics import register_process_metrics
from flott.runtime.metrics.prometheus import DEFAULT_PORT, FACTORY_CLASS, PrometheusReporter, parse_port_range
from flott.runtime.metrics.registry import MetricRegistry

_PREFIX = "metrics.reporter."
_PROMETHEUS_KEYS = {"factory.class", "port", "filterLabelValueCharacters"}


def configured_reporter_names(config: Configuration) -> list[str]:
    values = config.to_dict()
    names = sorted({k[len(_PREFIX):].split(".", 1)[0] for k in values if k.startswith(_PREFIX)})
    if "metrics.reporters" in values:
        enabled = [n.strip() for n in values["metrics.reporters"].replace(";", ",").split(",") if n.strip()]
        return [n for n in names if n in enabled]
    return names


def reporters_from_config(config: Configuration, bind_host: str) -> list[PrometheusReporter]:
    """The configured reporters, not yet open; ConfigurationError for what flott cannot honour."""
    values = config.to_dict()
    reporters: list[PrometheusReporter] = []
    for name in configured_reporter_names(config):
        prefix = f"{_PREFIX}{name}."
        factory_key = f"{prefix}factory.class"
        factory = values.get(factory_key, "").strip()
        if not factory:
            legacy = values.get(f"{prefix}class")
            hint = f" ({prefix}class = {legacy!r} is the key Flink 2 removed)" if legacy else ""
            raise ConfigurationError(f"{factory_key}: metric reporter '{name}' names no factory{hint}")
        if factory != FACTORY_CLASS:
            raise ConfigurationError(
                f"{factory_key}: unknown metric reporter factory {factory!r}; flott has {FACTORY_CLASS}"
            )
        for key in sorted(values):
            if key.startswith(prefix) and key[len(prefix):] not in _PROMETHEUS_KEYS:
                raise ConfigurationError(
                    f"{key}: the Prometheus reporter has no such option "
                    f"(it takes {', '.join(sorted(prefix + k for k in _PROMETHEUS_KEYS))})"
                )
        port_key = f"{prefix}port"
        ports = parse_port_range(values.get(port_key, DEFAULT_PORT), port_key)
        filter_key = f"{prefix}filterLabelValueCharacters"
        filter_values = config.get_bool(filter_key, True) if filter_key in values else True
        reporters.append(PrometheusReporter(ports, bind_host, filter_values))
    return reporters


def process_metric_registry(
    config: Configuration, kind: str, tm_id: str = "", bind_host: str = "127.0.0.1"
) -> MetricRegistry:
    """A JobManager's or TaskExecutor's registry: its reporters opened, its ``Status`` metrics in."""
    reporters = reporters_from_config(config, bind_host)
    for reporter in reporters:
        reporter.open()
    registry = MetricRegistry(list(reporters))
    register_process_metrics(registry, socket.gethostname(), kind, tm_id)
    return registry


def close_reporters(registry: MetricRegistry) -> None:
    for reporter in registry.reporters:
        close = getattr(reporter, "close", None)
        if close is not None:
            close()
