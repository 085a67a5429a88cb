"""After a TaskExecutor is SIGKILLed mid-run and the job restores, REST tells what happened.

A real embedded cluster (two TaskExecutor processes), a running job with a fixed-delay restart
strategy; the TaskExecutor running one of its subtasks is killed. Then, as Flink answers:
``numRestarts``/``fullRestarts`` count the restart, ``/exceptions`` has the failure (root cause,
time, task, where it ran, the other failed tasks), ``/config`` names the restart strategy, and
the killed attempt answers at ``/attempts/0`` next to the new attempt 1.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from typing import Any

from tests.rest.conftest import RestCluster
from tests.rest.jobs import unbounded_job


async def _poll(check: Any, what: str, timeout_s: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = await check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


async def test_a_killed_task_executor_is_diagnosable_over_rest(rest_cluster: RestCluster) -> None:
    rc = rest_cluster
    graph = unbounded_job("diagnose me", parallelism=2, rate=300.0)
    graph.config.update(
        {
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": "3",
            "restart-strategy.fixed-delay.delay": "200 ms",
        }
    )
    async with rc.client() as client:
        job_id = await client.submit_job(graph)
    job = f"/jobs/{job_id}"

    async def records_flowing() -> Any:
        status, body = await rc.call("GET", job)
        assert status == 200
        ok = body["state"] == "RUNNING" and all(
            v["status"] == "RUNNING" and v["metrics"]["write-records"] > 0 for v in body["vertices"][:1]
        )
        return body if ok else None

    before = await _poll(records_flowing, "the job to run and emit records")
    source = before["vertices"][0]
    status, subtasks = await rc.call("GET", f"{job}/vertices/{source['id']}/subtasks/0")
    assert status == 200 and subtasks["attempt"] == 0
    victim_rid = subtasks["taskmanager-id"]
    victim_endpoint = subtasks["endpoint"]
    driver = rc.cluster.resource_manager.driver  # type: ignore[union-attr]
    assert driver is not None
    victim = driver.processes[victim_rid]
    status, metrics = await rc.call("GET", f"{job}/metrics?get=numRestarts,fullRestarts")
    assert {m["id"]: m["value"] for m in metrics} == {"numRestarts": "0", "fullRestarts": "0"}

    killed_at = int(time.time() * 1000)
    os.kill(victim.pid, signal.SIGKILL)

    async def restarted_and_running() -> Any:
        status, body = await rc.call("GET", f"{job}/vertices/{source['id']}/subtasks/0")
        assert status == 200
        return body if body["attempt"] >= 1 and body["status"] == "RUNNING" else None

    current = await _poll(restarted_and_running, "the job to restore on the surviving TaskExecutor")
    assert current["taskmanager-id"] != victim_rid

    # numRestarts / fullRestarts count the restart (job metrics and the aggregated job metrics).
    status, metrics = await rc.call("GET", f"{job}/metrics?get=numRestarts,fullRestarts,restartingTime")
    values = {m["id"]: m["value"] for m in metrics}
    assert values["numRestarts"] == values["fullRestarts"] == "1"
    assert int(values["restartingTime"]) >= 0
    status, agg = await rc.call("GET", "/jobs/metrics?get=numRestarts&agg=sum")
    assert agg == [{"id": "numRestarts", "sum": 1.0}]

    # The exception history: one entry, the failure that restarted the job.
    status, exceptions = await rc.call("GET", f"{job}/exceptions")
    assert status == 200
    history = exceptions["exceptionHistory"]
    assert history["truncated"] is False
    [entry] = history["entries"]
    assert killed_at - 1000 <= entry["timestamp"] <= int(time.time() * 1000)
    assert entry["exceptionName"] and entry["stacktrace"].startswith(entry["exceptionName"])
    task_pattern = re.compile(r"^.+ \([12]/2\)$")
    assert task_pattern.match(entry["taskName"]), entry
    assert entry["endpoint"] and entry["taskManagerId"]
    failures = [entry, *entry["concurrentExceptions"]]
    lost = [f for f in failures if f["taskManagerId"] == victim_rid]
    assert lost, f"the killed TaskExecutor's tasks are among the failures: {failures}"
    assert all(f["endpoint"] == victim_endpoint for f in lost)
    assert any("TaskExecutorLost" in f["exceptionName"] for f in lost), lost
    assert all(task_pattern.match(f["taskName"]) for f in failures)
    status, limited = await rc.call("GET", f"{job}/exceptions?maxExceptions=0")
    assert limited["exceptionHistory"] == {"entries": [], "truncated": True}

    # The restart strategy the job runs with.
    status, config = await rc.call("GET", f"{job}/config")
    assert config["execution-config"]["restart-strategy"] == (
        "Restart with fixed delay (PT0.2S). #3 restart attempts."
    )

    # The killed attempt answers next to the current one.
    vid = source["id"]
    for index in range(2):
        status, prior = await rc.call("GET", f"{job}/vertices/{vid}/subtasks/{index}/attempts/0")
        assert status == 200, prior
        assert prior["attempt"] == 0 and prior["subtask"] == index
        assert prior["status"] in ("FAILED", "CANCELED")
        assert prior["end-time"] >= prior["start-time"] > 0
    status, prior = await rc.call("GET", f"{job}/vertices/{vid}/subtasks/0/attempts/0")
    if prior["taskmanager-id"] == victim_rid:
        assert prior["status"] == "FAILED" and prior["endpoint"] == victim_endpoint
    status, now = await rc.call("GET", f"{job}/vertices/{vid}/subtasks/0/attempts/1")
    assert status == 200 and now["attempt"] == 1 and now["status"] == "RUNNING"
    status, missing = await rc.call("GET", f"{job}/vertices/{vid}/subtasks/0/attempts/7")
    assert status == 404 and "Attempt 7 not found" in missing["errors"][0]

    async with rc.client() as client:
        await client.cancel_job(job_id)
        assert (await client.wait_for_job_result(job_id, timeout_s=30)).status == "CANCELED"
    # Still there once the job is archived.
    status, exceptions = await rc.call("GET", f"{job}/exceptions")
    assert len(exceptions["exceptionHistory"]["entries"]) == 1
