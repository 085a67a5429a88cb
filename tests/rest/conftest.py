"""A real embedded cluster (TaskExecutor processes) behind a real REST endpoint on 127.0.0.1.

Every test gets its own cluster and endpoint on a free port; both are stopped
afterwards and no worker process may be left behind.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import psutil
import pytest

from flott.client.rest_cluster_client import RestClusterClient
from flott.configuration import Configuration
from flott.rest.webmonitor.rest_server_endpoint import RestServerEndpoint
from flott.runtime.minicluster.mini_cluster import MiniCluster

BASE_CONFIG = {
    "heartbeat.interval": "300",
    "heartbeat.timeout": "5000",
    "taskmanager.numberOfTaskSlots": "2",
    "rest.port": "0",
    "rest.address": "127.0.0.1",
    "rest.bind-address": "127.0.0.1",
    "rest.retry.max-attempts": "2",
    "rest.retry.delay": "100 ms",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RestCluster:
    cluster: MiniCluster
    endpoint: RestServerEndpoint
    config: Configuration
    http: aiohttp.ClientSession

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.endpoint.port}"

    @property
    def base_url(self) -> str:
        return f"http://{self.address}"

    def client(self, **overrides: str) -> RestClusterClient:
        return RestClusterClient(self.config.with_overrides(overrides), self.address)

    async def call(self, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
        """One raw request; the status and the decoded JSON body (every answer must be JSON)."""
        async with self.http.request(method, self.base_url + path, **kwargs) as resp:
            assert resp.headers["Content-Type"] == "application/json; charset=UTF-8", (path, resp.headers)
            return resp.status, await resp.json(content_type=None)


def make_config(**overrides: str) -> Configuration:
    return Configuration({**BASE_CONFIG, **overrides})


async def start_rest_cluster(
    config: Configuration, num_task_managers: int = 2
) -> tuple[MiniCluster, RestServerEndpoint]:
    cluster = MiniCluster(config, num_task_managers=num_task_managers)
    await cluster.start()
    endpoint = RestServerEndpoint(config, cluster.dispatcher_gateway)
    try:
        await endpoint.start()
    except BaseException:
        await cluster.close()
        raise
    return cluster, endpoint


@pytest.fixture
def no_leftover_processes() -> Any:
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    yield
    leftover = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    _, alive = psutil.wait_procs(leftover, timeout=10)
    for p in alive:
        p.kill()
    assert not alive, f"worker processes left behind: {[p.pid for p in alive]}"


@pytest.fixture
async def rest_cluster(no_leftover_processes: Any) -> AsyncIterator[RestCluster]:
    config = make_config()
    cluster, endpoint = await start_rest_cluster(config)
    try:
        async with aiohttp.ClientSession() as http:
            yield RestCluster(cluster, endpoint, config, http)
    finally:
        await endpoint.stop()
        await cluster.close()
