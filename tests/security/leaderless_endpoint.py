"""flott's real REST endpoint on loopback with no Dispatcher leader behind it, for tests that send
thousands of requests: everything the endpoint checks before it calls the cluster (HTTP framing,
path and query parameters, multipart parsing, the JobGraph decoder) answers as on a cluster, and a
request that passes all of it gets the leader-election 503. It runs on its own event loop in a
thread, so synchronous hypothesis tests can talk to it over a socket.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flott.configuration import Configuration
from flott.rest.webmonitor.rest_server_endpoint import RestServerEndpoint


@dataclass
class LeaderlessEndpoint:
    port: int
    upload_dir: Path

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], Any]:
        """One request on a fresh connection: status, headers and the JSON body (every answer is JSON)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            raw = resp.read()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, json.loads(raw)
        finally:
            conn.close()

    def leftover_uploads(self) -> list[Path]:
        return [p for p in self.upload_dir.rglob("*") if p.is_file()]


@contextmanager
def leaderless_endpoint(
    upload_dir: Path, lingering_time_s: float = 10.0, **config: str
) -> Iterator[LeaderlessEndpoint]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="leaderless-rest", daemon=True)
    thread.start()
    settings = {
        "rest.port": "0",
        "rest.address": "127.0.0.1",
        "rest.bind-address": "127.0.0.1",
        "web.upload.dir": str(upload_dir),
        **config,
    }
    endpoint = RestServerEndpoint(Configuration(settings), lambda: None, lingering_time_s=lingering_time_s)
    try:
        asyncio.run_coroutine_threadsafe(endpoint.start(), loop).result(timeout=60)
        yield LeaderlessEndpoint(endpoint.port, upload_dir)
    finally:
        asyncio.run_coroutine_threadsafe(endpoint.stop(), loop).result(timeout=60)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
