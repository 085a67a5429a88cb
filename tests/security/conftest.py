"""A real session cluster on loopback: a JobManager process (``flott jobmanager start``) with local
TaskExecutor processes, or standalone TaskExecutors started next to it, talked to over HTTP.

Every process is started here and stopped here, by pid; a test that leaves one behind fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import psutil
import pytest

from flott.runtime.jobgraph import JobGraph, encode_job_graph

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


@dataclass
class SessionCluster:
    port: int
    rpc_port: int
    jobmanager: subprocess.Popen[bytes]
    log_path: Path
    config: dict[str, str]
    standalone: list[subprocess.Popen[bytes]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    """Sent with every request of :meth:`get` and :meth:`request` (a bearer token, with REST auth)."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str, timeout: float = 10) -> Any:
        req = urllib.request.Request(self.base_url + path, headers=self.headers)
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read())

    def request(self, method: str, path: str, body: Any = None, timeout: float = 10) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base_url + path, data=data, method=method, headers=self.headers)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw)
            except ValueError:
                return e.code, raw.decode(errors="replace")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def task_executor_processes(self) -> list[psutil.Process]:
        procs = [p for p in psutil.Process(self.jobmanager.pid).children(recursive=True)]
        procs += [psutil.Process(p.pid) for p in self.standalone if p.poll() is None]
        return [
            p
            for p in procs
            if "flott.runtime.taskexecutor" in " ".join(p.cmdline()) or "taskmanager" in p.cmdline()
        ]

    def wait_for(self, what: str, check: Any, timeout: float = 60) -> Any:
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            try:
                last = check()
                if last:
                    return last
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.2)
        raise AssertionError(
            f"timed out waiting for {what} (last: {last!r})\n--- log ---\n{self.log()[-4000:]}"
        )

    def wait_task_managers(self, n: int, timeout: float = 60) -> None:
        self.wait_for(f"{n} TaskManagers", lambda: self.get("/overview")["taskmanagers"] == n, timeout)

    def job_state(self, job_id: str) -> str:
        return str(self.get(f"/jobs/{job_id}")["state"])

    def wait_job_state(self, job_id: str, state: str, timeout: float = 60) -> None:
        self.wait_for(f"job {job_id} {state}", lambda: self.job_state(job_id) == state, timeout)

    def wait_all_tasks_running(self, job_id: str, timeout: float = 60) -> None:
        def running() -> bool:
            job = self.get(f"/jobs/{job_id}")
            return job["state"] == "RUNNING" and all(v["status"] == "RUNNING" for v in job["vertices"])

        self.wait_for(f"every task of {job_id} RUNNING", running, timeout)

    def start_standalone_task_manager(self, extra: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        args = [
            sys.executable,
            "-m",
            "flott.cli.main",
            "taskmanager",
            "start",
            "--jobmanager",
            f"127.0.0.1:{self.rpc_port}",
        ]
        for k, v in {**self.config, **(extra or {})}.items():
            args += ["-D", f"{k}={v}"]
        with self.log_path.open("ab") as log:
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=_env())
        self.standalone.append(proc)
        return proc


def start_session_cluster(
    tmp_path: Path, task_managers: int = 2, headers: dict[str, str] | None = None, **overrides: str
) -> SessionCluster:
    port, rpc_port = free_port(), free_port()
    config = {
        "rest.port": str(port),
        "rest.address": "127.0.0.1",
        "rest.bind-address": "127.0.0.1",
        "jobmanager.rpc.port": str(rpc_port),
        "blob.server.port": "0",
        "heartbeat.interval": "300",
        "heartbeat.timeout": "3000",
        "taskmanager.numberOfTaskSlots": "1",
        "state.savepoints.dir": str(tmp_path / "savepoints"),
        "execution.checkpointing.dir": str(tmp_path / "checkpoints"),
        "web.upload.dir": str(tmp_path / "upload"),
        **overrides,
    }
    args = [sys.executable, "-m", "flott.cli.main", "jobmanager", "start"]
    args += ["--taskmanagers", str(task_managers)]
    for k, v in config.items():
        args += ["-D", f"{k}={v}"]
    log_path = tmp_path / "jobmanager.log"
    with log_path.open("ab") as log:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=_env())
    cluster = SessionCluster(port, rpc_port, proc, log_path, config, headers=dict(headers or {}))
    try:
        cluster.wait_task_managers(task_managers)
    except BaseException:
        stop_session_cluster(cluster)
        raise
    return cluster


def stop_session_cluster(cluster: SessionCluster) -> list[int]:
    """SIGTERM to every process started; the pids of those that had to be killed."""
    family: list[psutil.Process] = []
    for p in [cluster.jobmanager, *cluster.standalone]:
        try:
            proc = psutil.Process(p.pid)
            family += [proc, *proc.children(recursive=True)]
        except psutil.NoSuchProcess:
            pass
    for proc in family:
        try:
            proc.send_signal(signal.SIGCONT)  # a test may have paused one
            proc.send_signal(signal.SIGTERM)
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(family, timeout=20)
    for proc in alive:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    for p in [cluster.jobmanager, *cluster.standalone]:
        p.wait(timeout=10)
    return [p.pid for p in alive]


@pytest.fixture
def session_cluster(tmp_path: Path) -> Iterator[SessionCluster]:
    cluster = start_session_cluster(tmp_path)
    try:
        yield cluster
    finally:
        killed = stop_session_cluster(cluster)
        assert not killed, f"processes did not stop on SIGTERM: {killed}"


def submission_form(
    graph: JobGraph | bytes,
    artifacts: dict[str, bytes] | None = None,
    entry_names: dict[str, str] | None = None,
) -> aiohttp.FormData:
    """Flink's multipart ``POST /jobs``: the request attribute and one part per file."""
    data = graph if isinstance(graph, bytes) else encode_job_graph(graph)
    artifacts = artifacts or {}
    request = {
        "jobGraphFileName": "graph.bin",
        "jobJarFileNames": [],
        "jobArtifactFileNames": [
            {"entryName": (entry_names or {}).get(n, n), "fileName": n} for n in artifacts
        ],
    }
    form = aiohttp.FormData()
    form.add_field("request", json.dumps(request), content_type="application/json")
    form.add_field("file_0", data, filename="graph.bin", content_type="application/octet-stream")
    for i, (name, content) in enumerate(artifacts.items(), 1):
        form.add_field(f"file_{i}", content, filename=name, content_type="application/octet-stream")
    return form


async def submit_async(cluster: SessionCluster, graph: JobGraph | bytes, **kwargs: Any) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as http,
        http.post(cluster.base_url + "/v1/jobs", data=submission_form(graph, **kwargs)) as resp,
    ):
        return resp.status, await resp.json(content_type=None)


def submit(cluster: SessionCluster, graph: JobGraph | bytes, **kwargs: Any) -> tuple[int, Any]:
    """``POST /jobs`` as Flink's client sends it; the status and the decoded JSON answer."""
    return asyncio.run(submit_async(cluster, graph, **kwargs))


def with_parallelism(graph: JobGraph, parallelism: int, max_parallelism: int | None = None) -> JobGraph:
    vertices = [
        msgspec.structs.replace(v, parallelism=parallelism, max_parallelism=max_parallelism or parallelism)
        for v in graph.vertices
    ]
    return msgspec.structs.replace(graph, vertices=vertices)
