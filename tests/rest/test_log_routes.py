"""Logs over REST from a real session cluster: the JobManager's files read in its own process,
a TaskManager's fetched from its TaskExecutor over RPC; names confined to the log directory."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from flott.runtime.entrypoint.log_files import LogFiles, tail
from tests.rest.session_cluster import SessionCluster, session_cluster

_TEXT = "text/plain; charset=UTF-8"
_JSON = "application/json; charset=UTF-8"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionCluster]:
    with session_cluster(tmp_path_factory.mktemp("logs") / "run") as c:
        yield c


def _text(cluster: SessionCluster, path: str) -> str:
    status, ctype, body = cluster.get(path)
    assert status == 200, (path, status, body[:300])
    assert ctype == _TEXT, (path, ctype)
    return body.decode()


def _refused(cluster: SessionCluster, path: str) -> tuple[int, list[str]]:
    status, ctype, body = cluster.get(path)
    assert ctype == _JSON, (path, ctype, body[:200])
    return status, json.loads(body)["errors"]


def test_jobmanager_logs_list_read_log_and_stdout(cluster: SessionCluster) -> None:
    listed = cluster.get_json("/jobmanager/logs")["logs"]
    on_disk = {p.name: p.stat().st_size for p in cluster.log_dir.iterdir() if p.is_file()}
    names = {entry["name"] for entry in listed}
    assert names == set(on_disk), (listed, on_disk)
    jm_log = next(n for n in names if "standalonesession" in n)
    assert all(entry["size"] >= 0 and entry["mtime"] > 0 for entry in listed)

    log = _text(cluster, "/jobmanager/log")
    assert "REST endpoint listening" in log
    assert (cluster.log_dir / jm_log).read_text().startswith(log[:200])
    assert _text(cluster, f"/jobmanager/logs/{jm_log}")[:200] == log[:200]
    assert _text(cluster, f"/v1/jobmanager/logs/{jm_log}")[:200] == log[:200]

    stdout_file = next(cluster.run_dir.glob("jobmanager-*.log"))
    assert _text(cluster, "/jobmanager/stdout") == stdout_file.read_text()


def test_taskmanager_logs_come_from_the_task_executor(cluster: SessionCluster) -> None:
    [tm] = cluster.get_json("/taskmanagers")["taskmanagers"]
    base = f"/taskmanagers/{tm['id']}"
    listed = {entry["name"]: entry["size"] for entry in cluster.get_json(f"{base}/logs")["logs"]}
    te_log = next(n for n in listed if "taskexecutor" in n)
    log = _text(cluster, f"{base}/log")
    assert tm["id"] in log, "the TaskExecutor's own log names its resource id"
    assert _text(cluster, f"{base}/logs/{te_log}")[:300] == log[:300]
    stdout_file = next(cluster.run_dir.glob("jobmanager-*.log"))
    assert _text(cluster, f"{base}/stdout") == stdout_file.read_text(), "it inherits the cluster's stdout"
    status, errors = _refused(cluster, f"{base}/logs/no-such.log")
    assert status == 404 and errors == ["This file does not exist in TaskManager log dir."]
    status, errors = _refused(cluster, f"/taskmanagers/{'0' * 32}/log")
    assert status == 404 and "Could not find TaskExecutor" in errors[0]


@pytest.mark.parametrize("prefix", ["/jobmanager", "/taskmanagers/{tm}"])
def test_names_cannot_leave_the_log_directory(cluster: SessionCluster, prefix: str) -> None:
    if "{tm}" in prefix:
        prefix = prefix.format(tm=cluster.get_json("/taskmanagers")["taskmanagers"][0]["id"])
    outside = cluster.run_dir / "secret.txt"
    outside.write_text("not a log\n")
    link = cluster.log_dir / "escape.log"
    if not link.is_symlink():
        os.symlink(outside, link)
    inside = cluster.log_dir / "inside.log"
    inside.write_text("an operator's own note\n")
    link_in = cluster.log_dir / "alias.log"
    if not link_in.is_symlink():
        os.symlink(inside, link_in)

    assert _text(cluster, f"{prefix}/logs/alias.log") == "an operator's own note\n"
    for bad in ("..%2Fsecret.txt", "%2E%2E", "..", "%2Fetc%2Fpasswd", "a%5C..%5Csecret.txt", "x%00y"):
        status, errors = _refused(cluster, f"{prefix}/logs/{bad}")
        assert status in (400, 404), (bad, status)
        assert "not a log" not in "".join(errors)
    status, errors = _refused(cluster, f"{prefix}/logs/..%2F..%2F..%2Fetc%2Fpasswd")
    assert status in (400, 404)
    status, errors = _refused(cluster, f"{prefix}/logs/escape.log")
    assert status == 404 and errors[0].startswith("This file does not exist in")
    names = {e["name"] for e in cluster.get_json(f"{prefix}/logs")["logs"]}
    assert "escape.log" not in names and "alias.log" in names


def test_reads_are_bounded_to_the_tail(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    big.write_bytes(b"".join(b"line %06d\n" % i for i in range(100_000)))
    data = tail(big, 1000)
    assert data.startswith(b"[... the first ")
    body = data.split(b"\n", 1)[1]
    assert len(body) <= 1000 and body.endswith(b"line 099999\n") and body.startswith(b"line ")
    assert tail(big, 10**9) == big.read_bytes()
    files = LogFiles(tmp_path, big, "JobManager")
    assert files.read("log", max_bytes=50).endswith(b"line 099999\n")
    assert [i.name for i in files.list()] == ["big.log"]


def test_taskmanager_thread_dump_comes_from_the_task_executor(cluster: SessionCluster) -> None:
    [tm] = cluster.get_json("/taskmanagers")["taskmanagers"]
    dump = cluster.get_json(f"/taskmanagers/{tm['id']}/thread-dump")["threadInfos"]
    main = next(t for t in dump if t["threadName"] == "MainThread")
    assert main["stringifiedThreadInfo"].startswith('"MainThread" Id=')
    assert "taskexecutor" in main["stringifiedThreadInfo"], "the TaskExecutor's stack"
    jm = cluster.get_json("/jobmanager/thread-dump")["threadInfos"]
    jm_main = next(t for t in jm if t["threadName"] == "MainThread")
    assert "taskexecutor" not in jm_main["stringifiedThreadInfo"]
