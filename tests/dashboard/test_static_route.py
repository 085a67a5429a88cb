"""The dashboard's static route on a real REST endpoint: what it serves, what it refuses, and that
the browser guard lets the dashboard's own (same-origin) requests through."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest

from flott.configuration import Configuration
from flott.rest.web import STATIC_DIR, Dashboard
from flott.rest.webmonitor.rest_server_endpoint import RestServerEndpoint


@pytest.fixture
async def endpoint() -> AsyncIterator[RestServerEndpoint]:
    config = Configuration({"rest.port": "0", "rest.address": "127.0.0.1", "rest.bind-address": "127.0.0.1"})
    ep = RestServerEndpoint(config, lambda: None)  # no leader: the API answers 503, the files still load
    await ep.start()
    try:
        yield ep
    finally:
        await ep.stop()


async def test_index_and_modules_are_served_with_their_types(endpoint: RestServerEndpoint) -> None:
    base = f"http://127.0.0.1:{endpoint.port}"
    async with aiohttp.ClientSession() as http:
        async with http.get(base + "/") as r:
            assert r.status == 200 and r.headers["Content-Type"] == "text/html; charset=utf-8"
            html = await r.text()
            assert "default-src 'self'" in r.headers["Content-Security-Policy"]
        assert '<script type="module" src="web/app.js">' in html, "relative URLs: works behind a prefix"
        for name, ctype in [
            ("app.js", "text/javascript"),
            ("dag.js", "text/javascript"),
            ("style.css", "text/css"),
        ]:
            async with http.get(f"{base}/web/{name}") as r:
                assert r.status == 200 and r.headers["Content-Type"].startswith(ctype), name
                assert await r.read() == (STATIC_DIR / name).read_bytes()
        async with http.get(base + "/index.html") as r:
            assert await r.text() == html


@pytest.mark.parametrize(
    "path",
    [
        "/web/nothing.js",
        "/web/..%2F__init__.py",
        "/web/%2e%2e%2f%2e%2e%2fbrowser_guard.py",
        "/web/../browser_guard.py",
        "/web/static",
        "/web/",
        "/web/__init__.py",
    ],
)
async def test_only_the_shipped_files_are_served(endpoint: RestServerEndpoint, path: str) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{endpoint.port}{path}") as r:
            assert r.status == 404, path
            assert r.headers["Content-Type"] == "application/json; charset=UTF-8"
            assert (await r.json())["errors"][0].startswith("Not found")


def test_the_dashboard_ships_no_file_outside_its_types() -> None:
    assert Dashboard().names == sorted(
        p.name for p in STATIC_DIR.iterdir() if p.suffix in {".html", ".js", ".css"}
    )


async def test_same_origin_requests_pass_the_browser_guard_and_foreign_ones_do_not(
    endpoint: RestServerEndpoint,
) -> None:
    own = f"127.0.0.1:{endpoint.port}"
    async with aiohttp.ClientSession() as http:
        # The dashboard's cancel: PATCH with the page's own Origin → past the guard (503: no leader here).
        async with http.patch(
            f"http://{own}/jobs/{'a' * 32}?mode=cancel",
            headers={"Origin": f"http://{own}", "Sec-Fetch-Site": "same-origin"},
        ) as r:
            assert r.status == 503
        async with http.patch(
            f"http://{own}/jobs/{'a' * 32}?mode=cancel",
            headers={"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
        ) as r:
            assert r.status == 403
        async with http.get(
            f"http://{own}/", headers={"Host": "evil.example", "Sec-Fetch-Site": "none"}
        ) as r:
            assert r.status == 403, "DNS rebinding: a page of another name may not load the dashboard"
