"""``/jobs/:id/rescales/*``: the rescales ``PATCH /jobs/:id/rescaling`` carried out, in Flink's shapes.

The history itself is a pure record (times passed in), checked without a cluster; then a real
job is rescaled on a real cluster and its history, overview, summary and details are read back
and validated against Flink's spec.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp

from flott.client.cluster_client import OperationFailedError
from flott.runtime.dispatcher.rescale_history import RescaleHistory
from tests.rest import spec
from tests.rest.conftest import RestCluster, make_config, start_rest_cluster
from tests.rest.jobs import unbounded_job


def test_the_history_keeps_the_newest_and_counts_every_rescale() -> None:
    graph = unbounded_job("h", parallelism=2)
    history = RescaleHistory(2)
    first = history.begin(graph, 1, now_ms=1_000)
    history.enter(first, "Restarting", now_ms=1_400)
    history.end(first, "COMPLETED", "SUCCEEDED", now_ms=1_500)
    second = history.begin(graph, 3, now_ms=2_000)
    history.end(second, "FAILED", "EXCEPTION_OCCURRED", now_ms=2_100, error="RpcTimeoutError: slow")
    third = history.begin(graph, 4, now_ms=3_000)
    snap = history.snapshot()
    assert [r.uuid for r in snap.history] == [third, second], "newest first, at most 2"
    assert snap.counts == {"COMPLETED": 1, "FAILED": 1, "IGNORED": 0, "IN_PROGRESS": 1}
    assert snap.durations_ms["COMPLETED"] == [500] and snap.durations_ms["FAILED"] == [100]
    done = snap.latest["COMPLETED"]
    assert done.uuid == first and done.attempt == 1
    assert [(s.state, s.enter_ms, s.leave_ms) for s in done.spans] == [
        ("StopWithSavepoint", 1_000, 1_400),
        ("Restarting", 1_400, 1_500),
    ]
    assert {(v.before, v.after) for v in done.vertices} == {(2, 1)}
    assert snap.latest["FAILED"].spans[-1].error == "RpcTimeoutError: slow"
    assert snap.history[0].terminal_state is None and snap.history[0].attempt == 3

    none_kept = RescaleHistory(0)
    r = none_kept.begin(graph, 1, now_ms=0)
    none_kept.end(r, "COMPLETED", "SUCCEEDED", now_ms=10)
    assert none_kept.snapshot().history == [] and none_kept.snapshot().counts["COMPLETED"] == 1


def _check(body: Any, path: str) -> None:
    schema = spec.response_schema("GET", path, 200)
    assert schema is not None
    spec.validate(body, schema)
    assert spec.unknown_fields(body, schema) == [], path


async def test_a_rescale_then_the_history_shows_it(no_leftover_processes: Any, tmp_path: Path) -> None:
    config = make_config(
        **{
            "web.adaptive-scheduler.rescale-history.size": "4",
            "execution.checkpointing.savepoint-dir": (tmp_path / "sp").as_uri(),
        }
    )
    cluster, endpoint = await start_rest_cluster(config, num_task_managers=2)
    try:
        async with aiohttp.ClientSession() as http:
            rc = RestCluster(cluster, endpoint, config, http)
            async with rc.client() as client:
                job_id = await client.submit_job(unbounded_job("rescaled", parallelism=2, rate=200))
                for _ in range(300):  # every task running: a savepoint can be taken
                    _, details = await rc.call("GET", f"/v1/jobs/{job_id}")
                    if all(v["tasks"]["RUNNING"] == v["parallelism"] for v in details["vertices"]):
                        break
                    await asyncio.sleep(0.1)
                j = f"/v1/jobs/{job_id}/rescales"
                status, history = await rc.call("GET", f"{j}/history")
                assert (status, history) == (200, [])
                failed = 0
                while True:  # a savepoint needs every task running; on a loaded machine, try again
                    try:
                        await client.rescale_job(job_id, 1, timeout_s=90)
                        break
                    except OperationFailedError as e:
                        assert "not all required tasks are currently running" in str(e) and failed < 3
                        failed += 1
                        await asyncio.sleep(1.0)

                status, history = await rc.call("GET", f"{j}/history")
                assert status == 200, history
                _check(history, "/jobs/{jobid}/rescales/history")
                rescale, *earlier = history
                assert [r["terminalState"] for r in earlier] == ["FAILED"] * failed
                assert all(r["terminatedReason"] == "EXCEPTION_OCCURRED" for r in earlier)
                assert rescale["terminalState"] == "COMPLETED"
                assert rescale["terminatedReason"] == "SUCCEEDED"
                assert rescale["triggerCause"] == "UPDATE_REQUIREMENT"
                assert rescale["rescaleAttemptId"] == failed + 1
                assert rescale["startTimestampInMillis"] <= rescale["endTimestampInMillis"]
                vertices = rescale["vertices"].values()
                before_after = {(v["preRescaleParallelism"], v["postRescaleParallelism"]) for v in vertices}
                assert before_after == {(2, 1)}
                assert [s["state"] for s in rescale["schedulerStates"]] == ["StopWithSavepoint", "Restarting"]
                _, details = await rc.call("GET", f"/v1/jobs/{job_id}")
                assert {v["parallelism"] for v in details["vertices"]} == {1}

                status, one = await rc.call("GET", f"{j}/details/{rescale['rescaleUuid']}")
                assert (status, one) == (200, rescale)
                _check(one, "/jobs/{jobid}/rescales/details/{rescaleuuid}")
                status, overview = await rc.call("GET", f"{j}/overview")
                _check(overview, "/jobs/{jobid}/rescales/overview")
                counts = {"completed": 1, "failed": failed, "ignored": 0, "inProgress": 0}
                assert overview["rescalesCounts"] == counts
                assert overview["latest"]["completed"] == rescale
                status, summary = await rc.call("GET", f"{j}/summary")
                _check(summary, "/jobs/{jobid}/rescales/summary")
                took = rescale["endTimestampInMillis"] - rescale["startTimestampInMillis"]
                assert summary["completedRescalesDurationStatsInMillis"]["max"] == took

                status, body = await rc.call("GET", f"{j}/config")
                assert status == 404 and "AdaptiveScheduler is not enabled" in body["errors"][0]
                status, body = await rc.call("GET", f"{j}/details/{'0' * 32}")
                assert status == 404
                status, body = await rc.call("GET", f"{j}/details/nothex")
                assert status == 400
                status, body = await rc.call("GET", f"/v1/jobs/{'0' * 32}/rescales/history")
                assert status == 404
                await client.cancel_job(job_id)
    finally:
        await endpoint.stop()
        await cluster.close()


async def test_without_a_history_size_the_routes_answer_404_as_flink(rest_cluster: RestCluster) -> None:
    rc = rest_cluster
    async with rc.client() as client:
        job_id = await client.submit_job(unbounded_job("no-history", parallelism=1, rate=100))
        for route in ("history", "overview", "summary", f"details/{'1' * 32}"):
            status, body = await rc.call("GET", f"/v1/jobs/{job_id}/rescales/{route}")
            assert status == 404, (route, body)
            assert "web.adaptive-scheduler.rescale-history.size" in body["errors"][0]
        await client.cancel_job(job_id)
