"""Storage confinement on a real session cluster: clients cannot point the JobManager or its
TaskExecutors at arbitrary URLs (SSRF), and savepoint disposal deletes savepoints flott wrote and
nothing else."""

from __future__ import annotations

import http.server
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.rest.jobs import unbounded_job
from tests.security.conftest import SessionCluster, submit


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        self.send_response(404)
        self.end_headers()

    do_HEAD = do_PUT = do_POST = do_GET

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def http_target() -> Iterator[tuple[str, list[str]]]:
    """A web server on loopback that records every request it gets."""
    hits: list[str] = []
    handler = type("Recorder", (_Recorder,), {"hits": hits})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def _errors(body: Any) -> str:
    assert isinstance(body, dict), body
    return " ".join(body["errors"])


def _operation(cluster: SessionCluster, path: str) -> dict[str, Any]:
    result: dict[str, Any] = cluster.wait_for(
        path, lambda: (r := cluster.get(path))["status"]["id"] == "COMPLETED" and r
    )
    return dict(result["operation"] or {})


def _running_job(cluster: SessionCluster) -> str:
    status, body = submit(cluster, unbounded_job("confined", parallelism=1))
    assert status == 202, body
    job_id: str = body["jobUrl"].rsplit("/", 1)[1]
    cluster.wait_all_tasks_running(job_id)
    return job_id


def _savepoint(cluster: SessionCluster, job_id: str, target: str) -> str:
    status, body = cluster.request("POST", f"/jobs/{job_id}/savepoints", {"target-directory": target})
    assert status == 202, body
    op = _operation(cluster, f"/jobs/{job_id}/savepoints/{body['request-id']}")
    assert "location" in op, op
    return str(op["location"])


def _dispose(cluster: SessionCluster, path: str) -> tuple[int, Any]:
    return cluster.request("POST", "/savepoint-disposal", {"savepoint-path": path})


def test_clients_cannot_point_the_cluster_at_urls(
    session_cluster: SessionCluster, http_target: tuple[str, list[str]], tmp_path: Path
) -> None:
    cluster = session_cluster
    url, hits = http_target
    job_id = _running_job(cluster)
    for target in (f"{url}/sp", f"simplecache::{url}/sp", "relative/savepoints", "file://relative"):
        status, body = cluster.request("POST", f"/jobs/{job_id}/savepoints", {"target-directory": target})
        assert status == 400, (target, body)
        status, body = cluster.request("POST", f"/jobs/{job_id}/stop", {"targetDirectory": target})
        assert status == 400, (target, body)
    status, body = _dispose(cluster, f"{url}/x")
    assert status == 400 and "scheme 'http' is not allowed" in _errors(body), body
    assert "flott.storage.allowed-schemes" in _errors(body)
    status, body = _dispose(cluster, "savepoints/savepoint-1")
    assert status == 400 and "absolute" in _errors(body), body

    graph = unbounded_job("ssrf-config", parallelism=1)
    for key in ("execution.checkpointing.dir", "execution.savepoint.path", "state.savepoints.dir"):
        bad = msgspec.structs.replace(graph, config={**graph.config, key: f"{url}/{key}"})
        status, body = submit(cluster, bad)
        assert status == 400 and key in _errors(body), (key, body)

    time.sleep(0.5)
    assert hits == [], hits  # not one request reached the web server
    assert cluster.job_state(job_id) == "RUNNING"


def test_disposal_deletes_only_savepoints_flott_wrote(
    session_cluster: SessionCluster, tmp_path: Path
) -> None:
    cluster = session_cluster
    job_id = _running_job(cluster)
    root = tmp_path / "savepoints"
    first = Path(_savepoint(cluster, job_id, str(root)))
    second = Path(_savepoint(cluster, job_id, str(root)))
    assert (first / "_metadata").is_file() and (first / "_savepoint-marker").is_file()

    # A directory of someone else's files with a savepoint's _metadata (and marker) copied in.
    victim = root / "precious"
    victim.mkdir()
    (victim / "thesis.tex").write_text("years of work")
    shutil.copy(first / "_metadata", victim / "_metadata")
    shutil.copy(first / "_savepoint-marker", victim / "_savepoint-marker")
    status, body = _dispose(cluster, str(victim))
    assert status == 200, body
    op = _operation(cluster, f"/savepoint-disposal/{body['request-id']}")
    assert "is not a savepoint flott wrote at this location" in str(op.get("failure-cause")), op
    assert (victim / "thesis.tex").read_text() == "years of work"

    # The same outside every savepoint location: refused before anything is read.
    outside = tmp_path / "elsewhere"
    shutil.copytree(first, outside)
    status, body = _dispose(cluster, str(outside))
    op = _operation(cluster, f"/savepoint-disposal/{body['request-id']}")
    assert "not under a savepoint location" in str(op.get("failure-cause")), op
    assert (outside / "_metadata").is_file()

    # A real savepoint: its files go; a file someone put into it stays.
    (second / "notes.txt").write_text("mine")
    for path, gone in ((first, True), (second, False)):
        status, body = _dispose(cluster, str(path))
        op = _operation(cluster, f"/savepoint-disposal/{body['request-id']}")
        assert op.get("failure-cause") is None, op
        assert not (path / "_metadata").exists()
        assert path.exists() != gone, sorted(p.name for p in path.rglob("*")) if path.exists() else None
    assert [p.name for p in second.rglob("*")] == ["notes.txt"]
    assert cluster.job_state(job_id) == "RUNNING"
