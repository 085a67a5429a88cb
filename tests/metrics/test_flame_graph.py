"""The flame graph route: Flink's waiting/disabled markers, then a tree of the task threads' stacks."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp

from tests.metrics.test_live_metrics import (
    eventually,
    rate_limited_job,
    slow_sink,
    subtask_values,
    vertex_ids,
)
from tests.rest.conftest import RestCluster, make_config, start_rest_cluster


def names(node: dict[str, Any]) -> set[str]:
    out = {node["name"]}
    for child in node.get("children", []):
        out |= names(child)
    return out


async def test_sampled_stacks_of_a_slow_sink_show_its_function_mostly_off_cpu(
    no_leftover_processes: Any,
) -> None:
    config = make_config(**{
        "rest.flamegraph.enabled": "true",
        "rest.flamegraph.num-samples": "20",
        "rest.flamegraph.delay-between-samples": "20 ms",
    })
    cluster, endpoint = await start_rest_cluster(config)
    try:
        async with aiohttp.ClientSession() as http:
            rc = RestCluster(cluster, endpoint, config, http)
            graph = rate_limited_job(slow_sink(), rate=100_000.0)
            async with rc.client() as client:
                await client.submit_job(graph)
                try:
                    _, sink = await vertex_ids(rc, graph.job_id)

                    async def sink_busy() -> bool:
                        v = await subtask_values(rc, graph.job_id, sink, 0, ["busyTimeMsPerSecond"])
                        return float(v.get("busyTimeMsPerSecond", 0)) > 0

                    await eventually(sink_busy, "the sink at work")
                    url = f"/jobs/{graph.job_id}/vertices/{sink}/flamegraph"
                    deadline = time.monotonic() + 90
                    seen_waiting = False
                    body: dict[str, Any] = {}
                    while time.monotonic() < deadline:
                        status, body = await rc.call("GET", url)
                        assert status == 200
                        seen_waiting |= body["endTimestamp"] == -3
                        if body["endTimestamp"] > 0:
                            break
                        await asyncio.sleep(0.5)
                    assert seen_waiting, "the first request starts sampling and answers -3 (waiting)"
                    assert body["endTimestamp"] > 0 and body["data"]["name"] == "root"
                    assert body["data"]["value"] >= 20, "20 samples of each running subtask's thread"
                    assert any("Slow.invoke" in n for n in names(body["data"])), names(body["data"])
                    _, off = await rc.call("GET", url + "?type=OFF_CPU")
                    _, on = await rc.call("GET", url + "?type=ON_CPU")
                    assert off["data"]["value"] + on["data"]["value"] == body["data"]["value"]
                    assert off["data"]["value"] > on["data"]["value"], "a sleeping sink is mostly off CPU"
                    status, _ = await rc.call("GET", url + "?type=SOMETIMES")
                    assert status == 400
                finally:
                    await client.cancel_job(graph.job_id)
    finally:
        await endpoint.stop()
        await cluster.close()


async def test_disabled_by_default(rest_cluster: RestCluster) -> None:
    graph = rate_limited_job(slow_sink())
    async with rest_cluster.client() as client:
        await client.submit_job(graph)
        try:
            source, _ = await vertex_ids(rest_cluster, graph.job_id)
            url = f"/jobs/{graph.job_id}/vertices/{source}/flamegraph"
            status, body = await rest_cluster.call("GET", url)
            assert (status, body) == (200, {"endTimestamp": -2})
        finally:
            await client.cancel_job(graph.job_id)
