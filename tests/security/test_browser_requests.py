"""A web page in the operator's browser cannot drive a loopback cluster: no CORS by default, no
state change from a foreign origin, no DNS rebinding. Non-browser clients are unaffected."""

from __future__ import annotations

import asyncio
import urllib.request
from typing import Any

import aiohttp
import pytest

from flott.configuration import Configuration
from flott.rest.browser_guard import BrowserGuard, RestForbiddenError
from tests.rest.jobs import bounded_job, unbounded_job
from tests.security.conftest import SessionCluster, submission_form, submit

EVIL = "http://evil.example"


def _raw(cluster: SessionCluster, method: str, path: str, headers: dict[str, str]) -> tuple[int, Any]:
    async def go() -> tuple[int, Any]:
        async with (
            aiohttp.ClientSession() as http,
            http.request(method, cluster.base_url + path, headers=headers) as resp,
        ):
            return resp.status, await resp.json(content_type=None)

    return asyncio.run(go())


def _submit_from_page(cluster: SessionCluster, origin: str) -> tuple[int, Any]:
    """What a page's ``<form method=post enctype=multipart/form-data>`` sends: no preflight."""

    async def go() -> tuple[int, Any]:
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                cluster.base_url + "/jobs",
                data=submission_form(bounded_job("from-a-web-page")),
                headers={"Origin": origin, "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"},
            ) as resp,
        ):
            return resp.status, await resp.json(content_type=None)

    return asyncio.run(go())


def test_a_web_page_cannot_submit_or_cancel(session_cluster: SessionCluster) -> None:
    cluster = session_cluster
    with urllib.request.urlopen(cluster.base_url + "/overview", timeout=10) as r:
        assert r.headers.get("Access-Control-Allow-Origin") is None  # CORS is off by default

    status, body = _submit_from_page(cluster, EVIL)
    assert status == 403 and "web.access-control-allow-origin" in " ".join(body["errors"]), body
    status, body = _submit_from_page(cluster, "null")  # a sandboxed frame or a file:// page
    assert status == 403, body
    assert cluster.get("/jobs/overview")["jobs"] == []

    status, body = submit(cluster, unbounded_job("mine", parallelism=1))  # the CLI: no Origin
    assert status == 202, body
    job_id = body["jobUrl"].rsplit("/", 1)[1]
    cluster.wait_job_state(job_id, "RUNNING")
    status, body = _raw(cluster, "PATCH", f"/jobs/{job_id}?mode=cancel", {"Origin": EVIL})
    assert status == 403, body
    assert cluster.job_state(job_id) == "RUNNING"

    # The dashboard served by the endpoint itself is same-origin and may act.
    own = f"http://127.0.0.1:{cluster.port}"
    status, body = _raw(cluster, "PATCH", f"/jobs/{job_id}?mode=cancel", {"Origin": own})
    assert status == 202, body
    cluster.wait_job_state(job_id, "CANCELED")


def test_dns_rebinding_is_refused(session_cluster: SessionCluster) -> None:
    cluster = session_cluster
    rebound = {"Host": f"evil.example:{cluster.port}", "Sec-Fetch-Site": "same-origin"}
    status, body = _raw(cluster, "GET", "/jobs/overview", rebound)
    assert status == 403 and "flott.rest.allowed-hosts" in " ".join(body["errors"]), body
    for host in (f"127.0.0.1:{cluster.port}", f"localhost:{cluster.port}"):
        status, _ = _raw(cluster, "GET", "/jobs/overview", {**rebound, "Host": host})
        assert status == 200
    status, _ = _raw(cluster, "GET", "/jobs/overview", {"Host": f"evil.example:{cluster.port}"})
    assert status == 200  # not a browser (no Origin, Referer or Sec-Fetch-*): curl, the CLI


def test_configured_origins_and_hosts() -> None:
    guard = BrowserGuard(
        Configuration(
            {
                "web.access-control-allow-origin": "http://dashboard.example",
                "flott.rest.allowed-hosts": "flink.internal",
            }
        )
    )
    assert guard.cors_origin == "http://dashboard.example"
    guard.check("POST", {"Origin": "http://dashboard.example", "Host": "flink.internal:8081"})
    with pytest.raises(RestForbiddenError):
        guard.check("DELETE", {"Origin": EVIL, "Host": "flink.internal:8081"})
    with pytest.raises(RestForbiddenError):
        guard.check("GET", {"Referer": "http://x/", "Host": "other.internal"})
    guard.check("GET", {"Origin": EVIL, "Host": "[::1]:8081"})  # reading needs CORS, not refused here
    assert BrowserGuard(Configuration()).cors_origin is None
