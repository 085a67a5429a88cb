"""REST authentication on a ZooKeeper-HA session cluster: a standby JobManager authenticates the
caller itself (same tokens) and serves through the leader's Dispatcher gateway, so a token works on
every JobManager; a client that finds the leader through ZooKeeper sends its token there."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from flott.client.rest_cluster_client import RestClusterClient
from flott.configuration import Configuration
from flott.errors import AuthenticationError, JobSubmissionError
from tests.highavailability.conftest import zk_root, zookeeper  # noqa: F401 (fixtures)
from tests.highavailability.ha_cluster import HaCluster, JobManager
from tests.highavailability.zookeeper_server import ZooKeeperServer
from tests.rest.jobs import bounded_job

OPERATOR = "ha-op-" + "5e1f0c2b9a8d7e6f5a4b3c2d1e0f9a8b"
READER = "ha-ro-" + "0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d"


def _get(jm: JobManager, path: str, token: str | None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    req = urllib.request.Request(jm.url + path, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def _wait(what: str, check: Any, c: HaCluster, timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if value := check():
                return value
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}\n{c.logs()}")


def test_standby_and_leader_lookup_with_tokens(
    zookeeper: ZooKeeperServer,  # noqa: F811
    zk_root: str,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("FLOTT_REST_TOKEN", raising=False)
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{OPERATOR} operator\n{READER} read-only\n")
    tokens.chmod(0o600)
    c = HaCluster(zookeeper.hosts, tmp_path / "cluster", zk_root, 3000, slots=2,
                  extra={"flott.rest.auth.tokens-file": str(tokens)})  # fmt: skip
    try:
        for _ in range(2):
            c.start_jobmanager()
        c.start_taskmanager()
        leader = c.wait_leader(60)
        standby = next(jm for jm in c.jobmanagers if jm is not leader)
        _wait(
            "the standby to serve the leader's overview",
            lambda: (r := _get(standby, "/overview", READER))[0] == 200 and r[1]["taskmanagers"] == 1,
            c,
        )
        assert _get(standby, "/overview", None)[0] == 401  # the standby checks the token itself
        assert _get(leader, "/overview", None)[0] == 401

        async def clients() -> None:
            ha = Configuration({**c.conf, "rest.retry.max-attempts": "3"})
            standby_address = f"http://{standby.rest}"
            async with RestClusterClient(ha, standby_address, token=READER) as reader:
                with pytest.raises(JobSubmissionError, match="operator role"):
                    await reader.submit_job(bounded_job("ha-denied", n=5))
            async with RestClusterClient(ha, standby_address, token=OPERATOR) as operator:
                graph = bounded_job("ha-through-standby", n=5)
                assert await operator.submit_job(graph) == graph.job_id  # via the standby
                assert (await operator.wait_for_job_result(graph.job_id, 90)).status == "FINISHED"
            async with RestClusterClient(ha, token=READER) as follower:  # leader from ZooKeeper
                assert follower.base_url == leader.url
                assert graph.job_id in {j.job_id for j in await follower.list_jobs()}
            async with RestClusterClient(ha) as anonymous:
                with pytest.raises(AuthenticationError):
                    await anonymous.list_jobs()

        asyncio.run(clients())
    finally:
        c.close()
    for log in (tmp_path / "cluster").glob("*.log"):
        text = log.read_text(errors="replace")
        assert OPERATOR not in text and READER not in text, log.name
