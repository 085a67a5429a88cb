"""A real session cluster for tests: ``flott cluster start`` in a private run directory, stopped by PID.

The JobManager and its TaskManagers are separate processes; their stdout and stderr go to
``<run dir>/jobmanager-<port>.log`` and their runtime logs to ``<run dir>/log`` (flott's
defaults), so the log routes have real files to serve.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class SessionCluster:
    address: str
    run_dir: Path
    conf: list[str]
    env: dict[str, str]
    pid: int

    @property
    def base_url(self) -> str:
        return f"http://{self.address}"

    @property
    def log_dir(self) -> Path:
        return self.run_dir / "log"

    def flott(self, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "flott.cli.main", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=self.env,
        )

    def get(self, path: str) -> tuple[int, str, bytes]:
        """Status, content type and body of a GET (error statuses included)."""
        try:
            with urllib.request.urlopen(self.base_url + path, timeout=20) as r:
                return r.status, r.headers["Content-Type"], r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers["Content-Type"], e.read()

    def get_json(self, path: str) -> Any:
        status, _, body = self.get(path)
        assert status == 200, (path, status, body[:500])
        return json.loads(body)

    def submit(self, script: Path, *args: str) -> str:
        """``flott run -d``: the job's id."""
        run = self.flott("run", "-m", self.address, "-d", str(script), *args)
        assert run.returncode == 0, run.stderr
        job_id = run.stdout.strip().split()[-1]
        assert len(job_id) == 32, run.stdout
        return job_id

    def wait_state(self, job_id: str, state: str, timeout_s: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while True:
            job: dict[str, Any] = self.get_json(f"/jobs/{job_id}")
            if job["state"] == state:
                return job
            assert time.monotonic() < deadline, f"job {job_id} is {job['state']}, not {state}"
            time.sleep(0.2)


@contextlib.contextmanager
def session_cluster(run_dir: Path, task_managers: int = 1, *conf_args: str) -> Iterator[SessionCluster]:
    port = free_port()
    conf = ["-D", f"rest.port={port}", "-D", "jobmanager.rpc.port=0", *conf_args]
    env = {**os.environ, "FLOTT_RUN_DIR": str(run_dir)}
    started = subprocess.run(
        [
            sys.executable,
            "-m",
            "flott.cli.main",
            "cluster",
            "start",
            "--taskmanagers",
            str(task_managers),
            *conf,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert started.returncode == 0, started.stderr
    pid = int((run_dir / f"cluster-{port}.pid").read_text())
    family = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    cluster = SessionCluster(f"127.0.0.1:{port}", run_dir, conf, env, pid)
    try:
        yield cluster
    finally:
        cluster.flott("cluster", "stop", *conf, timeout=60)
        _, alive = psutil.wait_procs(family, timeout=15)
        for p in alive:
            with contextlib.suppress(psutil.NoSuchProcess):
                p.kill()
        assert not alive, f"processes left after 'flott cluster stop': {[p.pid for p in alive]}"
