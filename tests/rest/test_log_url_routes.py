"""The ``log-url`` routes: built from Flink's HistoryServer patterns, 404 without them, as in Flink."""

from __future__ import annotations

import secrets

import pytest

from flott.rest.handler.log_url_handlers import log_url_pattern
from tests.rest.conftest import RestCluster


@pytest.mark.parametrize(
    ("configured", "usable"),
    [
        ("", None),
        ("   ", None),
        ("logs.example/<jobid>", "http://logs.example/<jobid>"),
        ("https://logs.example/<jobid>/<tmid>", "https://logs.example/<jobid>/<tmid>"),
        (" HTTP://logs.example/x ", "HTTP://logs.example/x"),
        ("file:///var/log/<jobid>", None),
    ],
)
def test_patterns_are_normalised_as_flinks_log_url_util(configured: str, usable: str | None) -> None:
    assert log_url_pattern(configured) == usable


async def test_log_urls_from_the_patterns(rest_cluster: RestCluster) -> None:
    rc = rest_cluster
    job_id, tm_id = secrets.token_hex(16), secrets.token_hex(16)
    jm, tm = f"/v1/jobs/{job_id}/jobmanager/log-url", f"/v1/jobs/{job_id}/taskmanagers/{tm_id}/log-url"
    for path, key in ((jm, "jobmanager"), (tm, "taskmanager")):
        status, body = await rc.call("GET", path)
        assert status == 404 and f"historyserver.log.{key}.url-pattern is not set" in body["errors"][0]
    config = rc.endpoint.config
    config.set("historyserver.log.jobmanager.url-pattern", "logs.example/jm?job=<jobid>&again=<jobid>")
    config.set("historyserver.log.taskmanager.url-pattern", "https://logs.example/<jobid>/<tmid>")
    status, body = await rc.call("GET", jm)
    assert (status, body) == (200, {"url": f"http://logs.example/jm?job={job_id}&again={job_id}"})
    status, body = await rc.call("GET", tm)
    assert (status, body) == (200, {"url": f"https://logs.example/{job_id}/{tm_id}"})
    config.set("historyserver.log.taskmanager.url-pattern", "ftp://logs.example/<tmid>")
    status, body = await rc.call("GET", tm)
    assert status == 404 and "scheme other than http or https" in body["errors"][0]
    status, body = await rc.call("GET", f"/v1/jobs/{job_id}/taskmanagers/..%2F/log-url")
    assert status == 400
