"""``/applications/*`` on a real cluster: each submitted job is an application of its own.

Listed, detailed, cancelled (then Flink's 409 for a second cancel), a failed one's exceptions,
the JobManager's configuration, and 404 for an id nobody submitted; every answer validated
against Flink's spec.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from tests.rest import spec
from tests.rest.conftest import RestCluster
from tests.rest.jobs import failing_job, unbounded_job


def _check(method: str, path: str, status: int, body: Any) -> None:
    schema = spec.response_schema(method, path, status)
    if schema is None:
        assert body == {}
        return
    spec.validate(body, schema)
    assert spec.unknown_fields(body, schema) == [], path


async def _until(rc: RestCluster, job_id: str, wanted: str) -> None:
    async with rc.client() as client:
        for _ in range(300):
            if await client.get_job_status(job_id) == wanted:
                return
            await asyncio.sleep(0.1)
    raise AssertionError(f"job {job_id} never reached {wanted}")


async def test_applications_are_the_submitted_jobs(rest_cluster: RestCluster) -> None:
    rc = rest_cluster
    async with rc.client() as client:
        running = await client.submit_job(unbounded_job("app-running", parallelism=1, rate=100))
        failing = await client.submit_job(failing_job("app-failing"))
    await _until(rc, running, "RUNNING")
    await _until(rc, failing, "FAILED")

    status, overview = await rc.call("GET", "/v1/applications/overview")
    assert status == 200
    _check("GET", "/applications/overview", status, overview)
    by_id = {a["id"]: a for a in overview["applications"]}
    assert by_id[running]["name"] == "app-running" and by_id[running]["status"] == "RUNNING"
    assert by_id[running]["jobs"] == {"RUNNING": 1}
    assert by_id[failing]["status"] == "FAILED" and by_id[failing]["end-time"] > 0

    status, details = await rc.call("GET", f"/v1/applications/{running}")
    assert status == 200, details
    _check("GET", "/applications/{applicationid}", status, details)
    assert [j["jid"] for j in details["jobs"]] == [running]
    assert details["timestamps"]["CREATED"] > 0 and details["timestamps"]["RUNNING"] > 0
    assert details["timestamps"]["FINISHED"] == 0

    status, exceptions = await rc.call("GET", f"/v1/applications/{failing}/exceptions")
    assert status == 200
    _check("GET", "/applications/{applicationid}/exceptions", status, exceptions)
    [entry] = exceptions["exceptionHistory"]["entries"][:1]
    assert entry["jobId"] == failing and "ZeroDivisionError" in entry["stacktrace"]

    status, config = await rc.call("GET", f"/v1/applications/{running}/jobmanager/config")
    assert status == 200
    assert {"key": "rest.address", "value": "127.0.0.1"} in config

    status, body = await rc.call("POST", f"/v1/applications/{running}/cancel")
    assert (status, body) == (202, {})
    await _until(rc, running, "CANCELED")
    _, details = await rc.call("GET", f"/v1/applications/{running}")
    assert details["status"] == "CANCELED" and details["timestamps"]["CANCELED"] > 0
    status, body = await rc.call("POST", f"/v1/applications/{running}/cancel")
    assert status == 409 and "already reached another terminal state (CANCELED)" in body["errors"][0]

    unknown = secrets.token_hex(16)
    for method, path in (
        ("GET", f"/v1/applications/{unknown}"),
        ("POST", f"/v1/applications/{unknown}/cancel"),
        ("GET", f"/v1/applications/{unknown}/exceptions"),
        ("GET", f"/v1/applications/{unknown}/jobmanager/config"),
    ):
        status, body = await rc.call(method, path)
        assert status == 404 and "could not be found" in body["errors"][0], (path, body)
    status, body = await rc.call("GET", "/v1/applications/not-an-id")
    assert status == 400
