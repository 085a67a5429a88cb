"""Live metrics of running jobs on a real cluster (TaskExecutor processes, REST over a socket).

These check liveness and plausibility only (the exact rules are tested as pure
code in test_views.py): a rate-limited source shows a records/s figure near its
rate, time shares add up to at most a second per second, watermarks advance,
and job, TaskManager and JobManager metrics are served by Flink's routes.
"""

from __future__ import annotations

import asyncio
import time
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

from flott.common import Types, WatermarkStrategy
from flott.common.watermark_strategy import TimestampAssigner
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.datagen import DataGeneratorSource, RateLimiterStrategy
from flott.graph import MissingUidWarning
from flott.runtime.jobgraph import JobGraph
from tests.rest.conftest import RestCluster

RATE = 1000.0
LONG_MIN = -(2**63)


def discard() -> Any:
    class Discard:
        def invoke(self, value: Any, context: Any) -> None:
            pass

    return Discard()


def slow_sink() -> Any:
    class Slow:
        def invoke(self, value: Any, context: Any) -> None:
            time.sleep(0.002)

    return Slow()


class EventTime(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value)


def rate_limited_job(sink: Any, rate: float = RATE) -> JobGraph:
    """source (1 subtask, ``rate``/s, event time = value) → map → keyBy → map → sink."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    source = DataGeneratorSource(lambda i: i, None, RateLimiterStrategy.per_second(rate), Types.LONG())
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(EventTime())
    (
        env.from_source(source, strategy, "gen")
        .set_parallelism(1)
        .map(lambda x: x + 1)
        .set_parallelism(1)
        .key_by(lambda x: x % 4)
        .map(lambda x: x)
        .add_sink(sink)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingUidWarning)
        return env.get_job_graph("live-metrics")


async def eventually(probe: Callable[[], Awaitable[Any]], what: str, timeout_s: float = 90.0) -> Any:
    """Poll ``probe`` until it returns something truthy (load makes startup slow; no tight bound)."""
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        last = await probe()
        if last:
            return last
        await asyncio.sleep(0.5)
    raise AssertionError(f"{what}: not seen within {timeout_s} s (last: {last!r})")


async def vertex_ids(rc: RestCluster, job_id: str) -> list[str]:
    status, body = await rc.call("GET", f"/jobs/{job_id}")
    assert status == 200
    return [v["id"] for v in body["vertices"]]


async def subtask_values(
    rc: RestCluster, job_id: str, vid: str, index: int, names: list[str]
) -> dict[str, str]:
    status, body = await rc.call(
        "GET", f"/jobs/{job_id}/vertices/{vid}/subtasks/{index}/metrics?get={','.join(names)}"
    )
    assert status == 200
    return {m["id"]: m["value"] for m in body}


async def test_rates_time_shares_watermarks_and_process_metrics_are_live(rest_cluster: RestCluster) -> None:
    rc = rest_cluster
    graph = rate_limited_job(discard())
    async with rc.client() as client:
        await client.submit_job(graph)
        try:
            source, keyed = await vertex_ids(rc, graph.job_id)

            async def source_rate() -> float | None:
                v = await subtask_values(rc, graph.job_id, source, 0, ["numRecordsOutPerSecond"])
                rate = float(v.get("numRecordsOutPerSecond", 0))
                return rate if 0.5 * RATE <= rate <= 1.5 * RATE else None

            await eventually(source_rate, "source numRecordsOutPerSecond near its rate")

            shares = ["busyTimeMsPerSecond", "idleTimeMsPerSecond", "backPressuredTimeMsPerSecond"]
            for vid, index in ((source, 0), (keyed, 0), (keyed, 1)):
                v = await subtask_values(rc, graph.job_id, vid, index, shares)
                assert set(v) == set(shares), v
                total = sum(float(x) for x in v.values())
                assert 0 < total <= 1000.0, (vid, index, v)

            _, ids = await rc.call("GET", f"/jobs/{graph.job_id}/vertices/{keyed}/metrics")
            listed = {m["id"] for m in ids}
            expected = {"0.numRecordsIn", "1.numRecordsInPerSecond", "0.numBytesIn"}
            expected.add("1.currentInputWatermark")
            assert expected <= listed

            async def watermarks() -> list[dict[str, str]] | None:
                status, body = await rc.call("GET", f"/jobs/{graph.job_id}/vertices/{keyed}/watermarks")
                assert status == 200
                ok = len(body) == 2 and all(int(m["value"]) > 0 for m in body)
                return body if ok else None

            first = await eventually(watermarks, "watermarks of the keyed vertex")
            assert sorted(m["id"] for m in first) == ["0.currentInputWatermark", "1.currentInputWatermark"]

            async def later() -> bool:
                body = await watermarks()
                return body is not None and int(body[0]["value"]) > int(first[0]["value"])

            await eventually(later, "watermarks advancing")

            _, job = await rc.call(
                "GET", f"/jobs/{graph.job_id}/metrics?get=uptime,numRestarts,numberOfCompletedCheckpoints"
            )
            jm = {m["id"]: m["value"] for m in job}
            assert int(jm["uptime"]) > 0
            assert jm["numRestarts"] == "0" and jm["numberOfCompletedCheckpoints"] == "0"

            _, tms = await rc.call("GET", "/taskmanagers")
            tm_id = tms["taskmanagers"][0]["id"]
            _, tm = await rc.call(
                "GET", f"/taskmanagers/{tm_id}/metrics?get=Status.JVM.CPU.Time,Status.JVM.Memory.Heap.Used"
            )
            assert {m["id"] for m in tm} == {"Status.JVM.CPU.Time", "Status.JVM.Memory.Heap.Used"}
            assert all(float(m["value"]) > 0 for m in tm)
            _, agg = await rc.call("GET", "/taskmanagers/metrics?get=Status.JVM.Threads.Count&agg=min,sum")
            assert agg[0]["min"] >= 1 and agg[0]["sum"] >= 2
            _, own = await rc.call("GET", "/jobmanager/metrics?get=Status.JVM.CPU.Time,numRunningJobs")
            assert {m["id"]: m["value"] for m in own}["numRunningJobs"] == "1"
        finally:
            await client.cancel_job(graph.job_id)


async def test_a_slow_sink_back_pressures_its_producers_and_shares_stay_within_a_second(
    rest_cluster: RestCluster,
) -> None:
    rc = rest_cluster
    graph = rate_limited_job(slow_sink(), rate=100_000.0)
    async with rc.client() as client:
        await client.submit_job(graph)
        try:
            source, keyed = await vertex_ids(rc, graph.job_id)
            shares = ["busyTimeMsPerSecond", "idleTimeMsPerSecond", "backPressuredTimeMsPerSecond"]

            async def back_pressured() -> dict[str, str] | None:
                v = await subtask_values(rc, graph.job_id, source, 0, shares)
                return v if float(v.get("backPressuredTimeMsPerSecond", 0)) > 100 else None

            v = await eventually(back_pressured, "the source back-pressured by the slow sink")
            assert sum(float(x) for x in v.values()) <= 1000.0
            sinks = [await subtask_values(rc, graph.job_id, keyed, index, shares) for index in (0, 1)]
            for sink in sinks:
                assert sum(float(x) for x in sink.values()) <= 1000.0
            # Keys need not split evenly: the subtask with the larger share is the bottleneck (the
            # other may starve while the source waits for the first one's queue).
            slowest = max(sinks, key=lambda m: float(m["busyTimeMsPerSecond"]))
            assert float(slowest["busyTimeMsPerSecond"]) > float(slowest["idleTimeMsPerSecond"]), sinks
            _, bp = await rc.call("GET", f"/jobs/{graph.job_id}/vertices/{source}/backpressure")
            assert bp["status"] == "ok" and bp["subtasks"][0]["ratio"] > 0.05, bp
        finally:
            await client.cancel_job(graph.job_id)
