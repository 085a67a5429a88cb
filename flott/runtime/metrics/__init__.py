"""Metrics on the TaskExecutor: the groups user functions register in, the metric kinds, and the
registry that reads them for reporting (Flink's ``org.apache.flink.runtime.metrics``).

Today the only reader is the heartbeat to the JobMaster, which carries a
:func:`~flott.runtime.metrics.groups.TaskMetricGroup.dump` of each task's user
metrics (Flink's MetricQueryService dump: query-scope name → value as a
string) for the REST endpoints. A reporter (JMX, Prometheus) plugs into
:class:`~flott.runtime.metrics.registry.MetricRegistry` and is told of every
metric added or removed with its group, whose scope components and
variables are Flink's.
"""
