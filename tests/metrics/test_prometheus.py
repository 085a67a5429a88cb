"""Flink's Prometheus reporter: each process's endpoint scraped while a real job runs."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
import urllib.request
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from flott.errors import ConfigurationError
from flott.runtime.metrics.groups import TaskMetricGroup
from flott.runtime.metrics.prometheus import FACTORY_CLASS, PrometheusReporter, parse_port_range
from flott.runtime.metrics.registry import MetricRegistry
from flott.runtime.metrics.reporter_setup import reporters_from_config
from flott.runtime.minicluster.mini_cluster import MiniCluster
from tests.metrics.test_live_metrics import discard, rate_limited_job
from tests.rest.conftest import RestCluster, make_config, start_rest_cluster
from tests.rest.jobs import unbounded_job

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(port: int) -> Samples | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp:
            text = resp.read().decode()
    except OSError:
        return None
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def of(samples: Samples, name: str, **labels: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {
        lbl: v
        for (n, lbl), v in samples.items()
        if n == name and all(dict(lbl).get(k) == val for k, val in labels.items())
    }


def test_names_and_labels_follow_flinks_prometheus_reporter() -> None:
    reporter = PrometheusReporter([], "127.0.0.1")
    task = TaskMetricGroup(
        MetricRegistry([reporter]), "host-1", "tm 7", "jid", "my job", "Source: gen -> Map", 0, 0,
        vertex_id="vid", execution_id="eid",
    )
    task.task.counter("numRecordsIn").inc(3)
    task.get_or_add_operator("op1", "Map").add_group("region", "eu.west").counter("hits").inc(2)
    families = {f.name: f for f in reporter.collect()}
    (records,) = families["flink_taskmanager_job_task_numRecordsIn"].samples
    assert records.value == 3.0
    assert records.labels == {
        "host": "host_1", "tm_id": "tm_7", "job_id": "jid", "job_name": "my_job", "task_id": "vid",
        "task_attempt_id": "eid", "task_name": "Source:_gen____Map", "subtask_index": "0",
        "task_attempt_num": "0",
    }
    (hits,) = families["flink_taskmanager_job_task_operator_region_hits"].samples
    assert hits.labels["region"] == "eu_west" and hits.labels["operator_name"] == "Map"
    task.close()
    assert not list(reporter.collect()), "a closed task's metrics leave the endpoint"


def test_port_ranges_and_refused_configurations() -> None:
    assert parse_port_range("9250-9252,9260", "k") == [9250, 9251, 9252, 9260]
    with pytest.raises(ConfigurationError, match=r"metrics\.reporter\.prom\.port"):
        reporters_from_config(make_config(**{
            "metrics.reporter.prom.factory.class": FACTORY_CLASS, "metrics.reporter.prom.port": "x"
        }), "127.0.0.1")
    with pytest.raises(ConfigurationError, match=r"metrics\.reporter\.jmx\.factory\.class.*unknown"):
        reporters_from_config(make_config(**{
            "metrics.reporter.jmx.factory.class": "org.apache.flink.metrics.jmx.JMXReporterFactory"
        }), "127.0.0.1")
    with pytest.raises(ConfigurationError, match=r"metrics\.reporter\.prom\.interval"):
        reporters_from_config(make_config(**{
            "metrics.reporter.prom.factory.class": FACTORY_CLASS, "metrics.reporter.prom.interval": "10 s"
        }), "127.0.0.1")
    assert reporters_from_config(make_config(**{
        "metrics.reporter.prom.factory.class": FACTORY_CLASS, "metrics.reporters": "other"
    }), "127.0.0.1") == [], "metrics.reporters names the reporters that start"


async def test_an_unknown_reporter_factory_is_refused_before_any_process_starts(
    no_leftover_processes: Any,
) -> None:
    config = make_config(**{"metrics.reporter.x.factory.class": "com.example.NoSuchReporterFactory"})
    cluster = MiniCluster(config, num_task_managers=1)
    with pytest.raises(ConfigurationError, match=r"metrics\.reporter\.x\.factory\.class"):
        await cluster.start()
    await cluster.close()


async def test_every_process_serves_flinks_metric_names_and_the_values_grow(
    no_leftover_processes: Any,
) -> None:
    ports, config = _prometheus_config()
    cluster, endpoint = await start_rest_cluster(config)
    try:
        async with aiohttp.ClientSession() as http:
            rc = RestCluster(cluster, endpoint, config, http)
            graph = rate_limited_job(discard())
            async with rc.client() as client:
                await client.submit_job(graph)
                try:
                    await _check_scrapes(ports, graph.job_id)
                finally:
                    await client.cancel_job(graph.job_id)
    finally:
        await endpoint.stop()
        await cluster.close()


def _prometheus_config() -> tuple[list[int], Any]:
    """A port range for the processes' endpoints and a cluster configuration reporting to it."""
    base = random.randrange(20000, 60000, 50)
    ports = list(range(base, base + 20))
    return ports, make_config(**{
        "metrics.reporter.prom.factory.class": FACTORY_CLASS,
        "metrics.reporter.prom.port": f"{ports[0]}-{ports[-1]}",
    })


async def _scrape_all(ports: list[int]) -> dict[int, Samples]:
    found = await asyncio.gather(*(asyncio.to_thread(scrape, p) for p in ports))
    return {p: s for p, s in zip(ports, found, strict=True) if s is not None}


async def _check_scrapes(ports: list[int], job_id: str) -> None:
    name = "flink_taskmanager_job_task_numRecordsOut"
    deadline = time.monotonic() + 90
    first: dict[tuple[tuple[str, str], ...], float] = {}
    while time.monotonic() < deadline:
        endpoints = await _scrape_all(ports)
        first = {k: v for s in endpoints.values() for k, v in of(s, name, job_id=job_id).items()}
        # sinks emit nothing; the cluster gauges are refreshed every second (at most that old)
        registered = [v for s in endpoints.values()
                      for v in of(s, "flink_jobmanager_numRegisteredTaskManagers").values()]
        if len(endpoints) == 3 and any(v > 0 for v in first.values()) and registered == [2.0]:
            break
        await asyncio.sleep(0.5)
    assert len(endpoints) == 3, f"one endpoint per process (JobManager + 2 TaskManagers): {sorted(endpoints)}"
    assert first, "the job's task metrics on the TaskManagers' endpoints"
    labels = dict(max(first, key=lambda k: first[k]))
    assert {"job_id", "job_name", "task_name", "subtask_index", "tm_id", "host"} <= set(labels)
    assert labels["job_name"] == "live_metrics"
    jm = [s for s in endpoints.values() if of(s, "flink_jobmanager_Status_JVM_CPU_Time")]
    assert len(jm) == 1, "the JobManager's endpoint"
    assert of(jm[0], "flink_jobmanager_job_uptime", job_id=job_id)
    tms = [s for s in endpoints.values() if of(s, "flink_taskmanager_Status_JVM_Memory_Heap_Used")]
    assert len(tms) == 2
    gauges = {n: list(of(jm[0], f"flink_jobmanager_{n}").values()) for n in (
        "numRegisteredTaskManagers", "taskSlotsTotal", "numRunningJobs", "taskSlotsAvailable")}
    assert gauges["numRegisteredTaskManagers"] == [2.0] and gauges["taskSlotsTotal"] == [4.0], gauges
    assert gauges["numRunningJobs"] == [1.0] and gauges["taskSlotsAvailable"] == [2.0], gauges
    for process in (jm[0], *tms):
        assert of(process, "flink_jobmanager_Status_Python_GC_gen0_Count") or of(
            process, "flink_taskmanager_Status_Python_GC_gen0_Count"), "every process's GC counts"
    grown: list[Any] = []
    rates: dict[Any, float] = {}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (grown and any(v > 0 for v in rates.values())):
        await asyncio.sleep(1)
        now = await _scrape_all(ports)
        again = {k: v for s in now.values() for k, v in of(s, name, job_id=job_id).items()}
        grown = [k for k, v in first.items() if again.get(k, 0) > v]
        rate_name = "flink_taskmanager_job_task_numRecordsOutPerSecond"
        rates = {k: v for s in now.values() for k, v in of(s, rate_name, job_id=job_id).items()}
    assert grown, "numRecordsOut grows between two scrapes"
    assert any(v > 0 for v in rates.values()), rates


async def test_a_killed_task_executor_shows_as_a_restart_on_the_jobmanagers_endpoint(
    no_leftover_processes: Any,
) -> None:
    """The restart a SIGKILLed TaskExecutor causes is what a Prometheus user alerts on:
    ``flink_jobmanager_job_numRestarts`` of the job goes from 0 to 1."""
    ports, config = _prometheus_config()
    cluster, endpoint = await start_rest_cluster(config)
    try:
        async with aiohttp.ClientSession() as http:
            rc = RestCluster(cluster, endpoint, config, http)
            graph = unbounded_job("restart me", parallelism=2, rate=300.0)
            graph.config.update({
                "restart-strategy.type": "fixed-delay",
                "restart-strategy.fixed-delay.attempts": "3",
                "restart-strategy.fixed-delay.delay": "200 ms",
            })
            async with rc.client() as client:
                job_id = await client.submit_job(graph)
                try:
                    restarts = await _job_restarts(ports, job_id, lambda v: v == [0.0])
                    source = graph.vertices[0].id
                    status, sub = await rc.call("GET", f"/jobs/{job_id}/vertices/{source}/subtasks/0")
                    assert status == 200
                    driver = cluster.resource_manager.driver  # type: ignore[union-attr]
                    assert driver is not None
                    os.kill(driver.processes[sub["taskmanager-id"]].pid, signal.SIGKILL)
                    restarts = await _job_restarts(ports, job_id, lambda v: v == [1.0])
                    assert restarts == [1.0]
                finally:
                    await client.cancel_job(job_id)
    finally:
        await endpoint.stop()
        await cluster.close()


async def _job_restarts(ports: list[int], job_id: str, done: Any) -> list[float]:
    """``flink_jobmanager_job_numRestarts`` of the job on the JobManager's endpoint, polled until
    ``done`` holds (60 s at most)."""
    deadline = time.monotonic() + 60
    values: list[float] = []
    while time.monotonic() < deadline:
        endpoints = await _scrape_all(ports)
        values = [v for s in endpoints.values()
                  for v in of(s, "flink_jobmanager_job_numRestarts", job_id=job_id).values()]
        if done(values):
            return values
        await asyncio.sleep(0.5)
    raise AssertionError(f"numRestarts of {job_id} on the JobManager's endpoint: {values}")
