"""``POST /jobs/:jobid/coordinators/:operatorid``: Flink's body, clear errors for what is unreachable."""

from __future__ import annotations

import asyncio
import base64

from tests.rest.conftest import RestCluster
from tests.rest.jobs import bounded_job, unbounded_job

REQUEST = {"serializedCoordinationRequest": base64.b64encode(b"\x92\xa0\x00").decode()}


async def test_errors_of_the_coordination_route(rest_cluster: RestCluster) -> None:
    status, body = await rest_cluster.call("POST", f"/jobs/{'0' * 32}/coordinators/abc", json=REQUEST)
    assert status == 404 and body["errors"]

    running = unbounded_job("coordinated")
    finished = bounded_job("done")
    async with rest_cluster.client() as client:
        await client.submit_job(running)
        await client.submit_job(finished)
        await client.wait_for_job_result(finished.job_id, timeout_s=60)
        try:
            status, body = await rest_cluster.call(
                "POST", f"/jobs/{finished.job_id}/coordinators/abc", json=REQUEST
            )
            assert status == 409 and "not running" in body["errors"][0]

            status, body = await rest_cluster.call(
                "POST", f"/jobs/{running.job_id}/coordinators/{'f' * 32}", json=REQUEST
            )
            assert status == 404 and "no operator" in body["errors"][0]

            operator = running.vertices[-1].operators[-1].operator_id
            status, body = await rest_cluster.call(
                "POST", f"/jobs/{running.job_id}/coordinators/{operator}", json=REQUEST
            )
            assert status == 200 and body == {"serializedCoordinationResult": ""}, (
                "an operator that answers no coordination requests gets an empty answer"
            )

            status, body = await rest_cluster.call(
                "POST", f"/jobs/{running.job_id}/coordinators/{operator}", json={"bogus": 1}
            )
            assert status == 400
        finally:
            await client.cancel_job(running.job_id)
            await asyncio.wait_for(client.wait_for_job_result(running.job_id, timeout_s=60), 90)
