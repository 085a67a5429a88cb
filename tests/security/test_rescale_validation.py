"""``PATCH /jobs/:id/rescaling`` is checked before the job is touched: a bad parallelism is a 400
with Flink's error body and the job keeps running (it used to stop a healthy job for good)."""

from __future__ import annotations

import time

from tests.rest.jobs import unbounded_job
from tests.security.conftest import SessionCluster, submit


def test_bad_rescale_requests_leave_the_job_running(session_cluster: SessionCluster) -> None:
    cluster = session_cluster
    status, body = submit(cluster, unbounded_job("steady", parallelism=1))
    assert status == 202, body
    job_id = body["jobUrl"].rsplit("/", 1)[1]
    cluster.wait_job_state(job_id, "RUNNING")
    before = cluster.get(f"/jobs/{job_id}")
    max_parallelism = before["maxParallelism"]

    cases = {
        "99999999999999999999": "could not parse parameters",
        "-3": "must be a positive integer",
        "0": "must be a positive integer",
        str(max_parallelism + 1): f"the job's max parallelism {max_parallelism}",
        "3": "only 2 are available",  # 2 slots: the free one and the one the job holds
    }
    for value, reason in cases.items():
        status, body = cluster.request("PATCH", f"/jobs/{job_id}/rescaling?parallelism={value}")
        assert status == 400, (value, status, body)
        assert isinstance(body, dict) and reason in " ".join(body["errors"]), (value, body)

    time.sleep(1.0)  # a stop-with-savepoint, had one been started, ends the job within this
    after = cluster.get(f"/jobs/{job_id}")
    assert after["state"] == "RUNNING"
    assert [v["parallelism"] for v in after["vertices"]] == [v["parallelism"] for v in before["vertices"]]
    assert all(v["status"] == "RUNNING" for v in after["vertices"]), after["vertices"]
