"""The metric API user functions see (PyFlink's ``pyflink.metrics``).

A function reaches it through ``runtime_context.get_metrics_group()`` in
``open()``. These are the abstract interfaces, with PyFlink's names and
signatures; the TaskExecutor's implementations live in
:mod:`flott.runtime.metrics`.
"""

from flott.metrics.metricbase import Counter, Distribution, Meter, Metric, MetricGroup

__all__ = ["MetricGroup", "Metric", "Counter", "Meter", "Distribution"]
