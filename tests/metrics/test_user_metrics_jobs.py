"""User metrics in real jobs: registered in open() on a TaskExecutor, read over REST by Flink's names."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

from flott.common import Types, WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.datagen import DataGeneratorSource, RateLimiterStrategy
from flott.graph import MissingUidWarning
from flott.runtime.jobgraph import JobGraph
from tests.rest.conftest import RestCluster


def counting_map() -> Any:
    """A MapFunction registering each kind of user metric (defined here: shipped by value)."""
    from flott.datastream import MapFunction

    class CountingMap(MapFunction):
        def open(self, runtime_context: Any) -> None:
            group = runtime_context.get_metrics_group()
            self.processed = group.add_group("my_group").counter("processed")
            self.evens = group.add_group("parity", "even").counter("seen")
            self.meter = group.meter("rate", time_span_in_seconds=10)
            self.sizes = group.distribution("sizes")
            self.last = 0
            group.gauge("last", lambda: self.last)

        def map(self, value: int) -> int:
            self.processed.inc()
            if value % 2 == 0:
                self.evens.inc()
            self.meter.mark_event()
            self.sizes.update(value)
            self.last = value
            return value * 10

    return CountingMap()


def discard() -> Any:
    class Discard:
        def invoke(self, value: Any, context: Any) -> None:
            pass

    return Discard()


def bounded_metrics_job(n: int = 100) -> JobGraph:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_collection(list(range(n))).map(counting_map()).add_sink(discard())
    return env.get_job_graph("user-metrics")


def unbounded_metrics_job() -> JobGraph:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    source = DataGeneratorSource(lambda i: i, None, RateLimiterStrategy.per_second(200.0), Types.LONG())
    env.from_source(source, WatermarkStrategy.no_watermarks(), "gen").map(counting_map()).add_sink(discard())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingUidWarning)
        return env.get_job_graph("user-metrics-running")


async def map_vertex(rc: RestCluster, job_id: str) -> str:
    status, body = await rc.call("GET", f"/jobs/{job_id}")
    assert status == 200
    (vertex,) = [v["id"] for v in body["vertices"] if "Map" in v["name"]]
    return str(vertex)


async def test_final_user_metrics_of_a_finished_job_over_rest(rest_cluster: RestCluster) -> None:
    graph = bounded_metrics_job(100)
    async with rest_cluster.client() as client:
        await client.submit_job(graph)
        result = await client.wait_for_job_result(graph.job_id, timeout_s=90)
    assert result.status == "FINISHED"
    job_id = graph.job_id
    vertex = await map_vertex(rest_cluster, job_id)
    base = f"/jobs/{job_id}/vertices/{vertex}"

    status, listing = await rest_cluster.call("GET", f"{base}/metrics")
    assert status == 200
    ids = {m["id"] for m in listing}
    for subtask in (0, 1):
        for name in ("my_group.processed", "parity.even.seen", "rate", "sizes", "last"):
            assert f"{subtask}.Map.{name}" in ids, (name, sorted(ids))

    wanted = "0.Map.my_group.processed,1.Map.my_group.processed,0.Map.parity.even.seen,1.Map.parity.even.seen"
    status, values = await rest_cluster.call("GET", f"{base}/metrics?get={wanted}")
    got = {m["id"]: m["value"] for m in values}
    assert all(isinstance(v, str) for v in got.values()), "Flink's JSON carries values as strings"
    assert int(got["0.Map.my_group.processed"]) + int(got["1.Map.my_group.processed"]) == 100
    assert int(got["0.Map.parity.even.seen"]) + int(got["1.Map.parity.even.seen"]) == 50

    status, agg = await rest_cluster.call(
        "GET", f"{base}/subtasks/metrics?get=Map.my_group.processed,Map.sizes&agg=sum,max"
    )
    assert status == 200
    assert agg == [{"id": "Map.my_group.processed", "sum": 100.0, "max": max(
        int(got["0.Map.my_group.processed"]), int(got["1.Map.my_group.processed"]))}], (
        "a distribution's text is not aggregated"
    )

    status, one = await rest_cluster.call("GET", f"{base}/subtasks/0/metrics?get=Map.sizes")
    (entry,) = one
    assert entry["value"].startswith("DistributionResult{sum=") and "count=" in entry["value"]


async def test_user_counter_of_a_running_job_reaches_rest_with_heartbeats(rest_cluster: RestCluster) -> None:
    graph = unbounded_metrics_job()
    async with rest_cluster.client() as client:
        await client.submit_job(graph)
        try:
            seen: list[int] = []
            for _ in range(200):
                _, body = await rest_cluster.call("GET", f"/jobs/{graph.job_id}")
                if body.get("state") == "RUNNING" and all(v["status"] == "RUNNING" for v in body["vertices"]):
                    vertex = await map_vertex(rest_cluster, graph.job_id)
                    _, values = await rest_cluster.call(
                        "GET", f"/jobs/{graph.job_id}/vertices/{vertex}/metrics?get=0.Map.my_group.processed"
                    )
                    if values:
                        seen.append(int(values[0]["value"]))
                        if len(seen) >= 2 and seen[-1] > seen[0] > 0:
                            break
                await asyncio.sleep(0.2)
            assert len(seen) >= 2 and seen[-1] > seen[0] > 0, f"the counter grows while the job runs: {seen}"
        finally:
            await client.cancel_job(graph.job_id)
            await client.wait_for_job_result(graph.job_id, timeout_s=60)
