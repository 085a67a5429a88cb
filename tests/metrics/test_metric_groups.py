"""User metric groups: Flink's identifiers and query names, PyFlink's semantics, meter rates."""

from __future__ import annotations

import timeit
from typing import Any

import pytest

from flott.metrics import Counter, MetricGroup
from flott.runtime.metrics.groups import TaskMetricGroup, query_filter
from flott.runtime.metrics.registry import MetricRegistry


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class RecordingReporter:
    def __init__(self) -> None:
        self.added: list[str] = []
        self.removed: list[str] = []

    def notify_of_added_metric(self, metric: Any, metric_name: str, group: Any) -> None:
        self.added.append(group.get_metric_identifier(metric_name))

    def notify_of_removed_metric(self, metric: Any, metric_name: str, group: Any) -> None:
        self.removed.append(group.get_metric_identifier(metric_name))


def task_group(registry: MetricRegistry, subtask: int = 1) -> TaskMetricGroup:
    return TaskMetricGroup(registry, "host1", "tm-7", "jid", "my job", "Source -> Map", subtask, 0)


def test_identifiers_and_query_names_follow_flink_scopes() -> None:
    reporter = RecordingReporter()
    registry = MetricRegistry([reporter])
    task = task_group(registry)
    op = task.get_or_add_operator("op1", "Map")
    assert isinstance(op, MetricGroup)
    c = op.add_group("my_group").counter("processed")
    kv = op.add_group("region", "eu.west").counter("hits")
    c.inc()
    c.inc(4)
    c.dec()
    kv.inc(2)
    assert c.get_count() == 4
    assert reporter.added == [
        "host1.taskmanager.tm-7.my job.Map.1.my_group.processed",
        "host1.taskmanager.tm-7.my job.Map.1.region.eu.west.hits",
    ]
    value_group: Any = op.add_group("region", "eu.west")
    assert value_group.get_all_variables()["<region>"] == "eu.west"
    assert value_group.get_all_variables()["<operator_name>"] == "Map"
    assert task.dump() == {"Map.my_group.processed": "4", "Map.region.eu_west.hits": "2"}
    task.close()
    assert sorted(reporter.removed) == sorted(reporter.added)


def test_pyflink_returns_the_same_metric_for_the_same_name() -> None:
    op = task_group(MetricRegistry()).get_or_add_operator("op1", "Map")
    a, b = op.counter("c"), op.counter("c")
    assert a is b
    assert op.add_group("g") is op.add_group("g")
    assert op.add_group("k", "v") is op.add_group("k", "v")


def test_meter_rate_is_events_over_the_time_span() -> None:
    clock = FakeClock()
    registry = MetricRegistry(clock=clock)
    task = task_group(registry)
    meter = task.get_or_add_operator("op1", "Map").meter("events", time_span_in_seconds=10)
    assert task.dump()["Map.events"] == "0.0"
    meter.mark_event(30)
    clock.now += 5
    assert task.dump()["Map.events"] == "0.0", "a rate changes only when the view updater runs"
    registry.update_views()
    assert task.dump()["Map.events"] == "6.0", "while the window fills: events over the time elapsed"
    meter.mark_event(20)
    clock.now += 5
    registry.update_views()
    assert task.dump()["Map.events"] == "5.0"
    clock.now += 5
    registry.update_views()
    assert task.dump()["Map.events"] == "2.0", "window full: Flink's (newest - oldest) / span, 20 events"
    assert meter.get_count() == 50
    with pytest.raises(ValueError):
        task.get_or_add_operator("op1", "Map").meter("bad", time_span_in_seconds=0)


def test_gauges_and_distributions_read_when_dumped() -> None:
    task = task_group(MetricRegistry())
    op = task.get_or_add_operator("op1", "Sink: Print to Std. Out")
    state = {"n": 7}
    op.gauge("size", lambda: state["n"])
    op.gauge("ratio", lambda: 0.5)
    op.gauge("broken", lambda: 1 // 0)
    d = op.distribution("latency")
    for v in (3, 1, 2):
        d.update(v)
    state["n"] = 9
    assert task.dump() == {
        "Sink__Print_to_Std__Out.size": "9",
        "Sink__Print_to_Std__Out.ratio": "0.5",
        "Sink__Print_to_Std__Out.latency": "DistributionResult{sum=6, count=3, min=1, max=3}",
    }, "a failing gauge is left out, the others are reported"
    with pytest.raises(TypeError):
        op.gauge("not_callable", 5)  # type: ignore[arg-type]


def test_long_operator_names_are_truncated_as_flink_does() -> None:
    op = task_group(MetricRegistry()).get_or_add_operator("op1", "x" * 100)
    assert op.get_metric_identifier("c").split(".")[4] == "x" * 80
    assert query_filter("a b.c:d,e") == "a_b_c_d_e"


def test_counter_inc_costs_what_a_method_call_costs() -> None:
    """Not a timing assertion: prints the per-call cost for the report (see test output with -s)."""
    counter: Counter = task_group(MetricRegistry()).get_or_add_operator("o", "Map").counter("c")
    n = 200_000
    seconds = min(timeit.repeat(counter.inc, number=n, repeat=3))
    print(f"counter.inc(): {seconds / n * 1e9:.0f} ns per call")
    assert counter.get_count() == 3 * n
