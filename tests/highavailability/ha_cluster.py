"""A ZooKeeper-HA session cluster of real processes for tests and ``bench/failover_bench.py``.

JobManagers are ``flott jobmanager start``, TaskManagers ``flott taskmanager start``, all with
the same HA configuration (``-D``). Every process's output goes to a log file in the work
directory; :meth:`HaCluster.close` kills whatever is left by PID.
"""

from __future__ import annotations

import collections
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kazoo.client import KazooClient

REPO = Path(__file__).resolve().parents[2]
JOB_SCRIPT = Path(__file__).resolve().parent / "counting_job.py"
KEYS = 7
CLUSTER_ID = "/ha-test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class JobManager:
    name: str
    proc: subprocess.Popen[bytes]
    rest_port: int
    rpc_port: int
    log: Path

    @property
    def rest(self) -> str:
        return f"127.0.0.1:{self.rest_port}"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"

    @property
    def rpc_address(self) -> str:
        return f"127.0.0.1:{self.rpc_port}"

    def alive(self) -> bool:
        return self.proc.poll() is None


def http(method: str, url: str, timeout: float = 10.0) -> tuple[int, Any]:
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        body = e.read()
        try:
            return e.code, json.loads(body or b"{}")
        except ValueError:
            return e.code, {"errors": [body.decode(errors="replace")]}


class HaCluster:
    def __init__(
        self,
        zk_hosts: str,
        workdir: Path,
        zk_root: str,
        session_timeout_ms: int = 3000,
        slots: int = 4,
        extra: dict[str, str] | None = None,
    ) -> None:
        self.zk_hosts = zk_hosts
        self.workdir = workdir
        self.zk_root = zk_root
        workdir.mkdir(parents=True, exist_ok=True)
        self.conf: dict[str, str] = {
            "high-availability.type": "zookeeper",
            "high-availability.zookeeper.quorum": zk_hosts,
            "high-availability.zookeeper.path.root": zk_root,
            "high-availability.cluster-id": CLUSTER_ID,
            "high-availability.storageDir": (workdir / "ha").as_uri(),
            "high-availability.zookeeper.client.session-timeout": str(session_timeout_ms),
            "high-availability.zookeeper.client.connection-timeout": "5000",
            "heartbeat.interval": "500",
            "heartbeat.timeout": "5000",
            "taskmanager.numberOfTaskSlots": str(slots),
            "rest.retry.max-attempts": "60",
            "rest.retry.delay": "250 ms",
            "pekko.ask.timeout": "10 s",
            "blob.server.port": "0",
            **(extra or {}),
        }
        self.jobmanagers: list[JobManager] = []
        self.taskmanagers: list[subprocess.Popen[bytes]] = []
        self._logs: list[Any] = []
        self._zk: KazooClient | None = None

    # -- processes -----------------------------------------------------------------------------

    def _dynamic(self, overrides: dict[str, str] | None = None) -> list[str]:
        args: list[str] = []
        for key, value in {**self.conf, **(overrides or {})}.items():
            args += ["-D", f"{key}={value}"]
        return args

    def _popen(self, args: list[str], log: Path) -> subprocess.Popen[bytes]:
        f = log.open("ab")
        self._logs.append(f)
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        return subprocess.Popen(
            [sys.executable, "-m", "flott.cli.main", "-v", *args],
            stdout=f,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=REPO,
            env=env,
            start_new_session=True,
        )

    def start_jobmanager(self) -> JobManager:
        rest_port, rpc_port = free_port(), free_port()
        name = f"jobmanager-{len(self.jobmanagers)}"
        log = self.workdir / f"{name}.log"
        proc = self._popen(
            [
                "jobmanager",
                "start",
                *self._dynamic({"rest.port": str(rest_port), "jobmanager.rpc.port": str(rpc_port)}),
            ],
            log,
        )
        jm = JobManager(name, proc, rest_port, rpc_port, log)
        self.jobmanagers.append(jm)
        return jm

    def start_taskmanager(self) -> subprocess.Popen[bytes]:
        log = self.workdir / f"taskmanager-{len(self.taskmanagers)}.log"
        proc = self._popen(["taskmanager", "start", *self._dynamic()], log)
        self.taskmanagers.append(proc)
        return proc

    def kill(self, jm: JobManager) -> None:
        os.kill(jm.proc.pid, signal.SIGKILL)
        jm.proc.wait(10)

    def close(self) -> None:
        for proc in [*self.taskmanagers, *(jm.proc for jm in self.jobmanagers)]:
            if proc.poll() is None:
                with_suppress_kill(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for proc in [*self.taskmanagers, *(jm.proc for jm in self.jobmanagers)]:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with_suppress_kill(proc.pid, signal.SIGKILL)
                proc.wait(5)
        for f in self._logs:
            f.close()
        if self._zk is not None:
            self._zk.stop()
            self._zk.close()

    def logs(self) -> str:
        out = []
        for p in sorted(self.workdir.glob("*.log")):
            text = p.read_text(errors="replace")
            out.append(f"===== {p.name} (last 6000 chars)\n{text[-6000:]}")
        return "\n".join(out)

    # -- ZooKeeper -----------------------------------------------------------------------------

    @property
    def zk(self) -> KazooClient:
        if self._zk is None:
            self._zk = KazooClient(self.zk_hosts, timeout=4.0)
            self._zk.start(10)
        return self._zk

    def leader_info(self, component: str = "rest_server") -> tuple[str, str] | None:
        path = f"{self.zk_root}{CLUSTER_ID}/leader/{component}/connection_info"
        try:
            data, _ = self.zk.get(path)
        except Exception:
            return None
        info = json.loads(data)
        return str(info["address"]), str(info["session_id"])

    def leader(self) -> JobManager | None:
        info = self.leader_info()
        if info is None:
            return None
        port = int(info[0].rsplit(":", 1)[1])
        return next((jm for jm in self.jobmanagers if jm.rest_port == port and jm.alive()), None)

    def wait_leader(self, timeout: float = 30.0, other_than: JobManager | None = None) -> JobManager:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            jm = self.leader()
            if jm is not None and jm is not other_than:
                return jm
            time.sleep(0.05)
        raise AssertionError(f"no leader within {timeout}s\n{self.logs()}")

    def start_leader_and_standby(self) -> tuple[JobManager, JobManager]:
        """Two JobManagers and two TaskManagers; once ready, (the leader, the standby)."""
        for _ in range(2):
            self.start_jobmanager()
        for _ in range(2):
            self.start_taskmanager()
        leader = self.wait_ready(2)
        return leader, next(jm for jm in self.jobmanagers if jm is not leader)

    def wait_ready(self, task_managers: int, timeout: float = 60.0) -> JobManager:
        """A leader whose ResourceManager has ``task_managers`` registered; every JobManager's REST up."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            leader = self.leader()
            if leader is not None:
                try:
                    status, body = http("GET", f"{leader.url}/overview", timeout=2)
                    if status == 200 and body["taskmanagers"] >= task_managers:
                        if all(self._rest_up(jm) for jm in self.jobmanagers if jm.alive()):
                            return leader
                except OSError:
                    pass
            time.sleep(0.1)
        raise AssertionError(f"cluster not ready within {timeout}s\n{self.logs()}")

    @staticmethod
    def _rest_up(jm: JobManager) -> bool:
        try:
            status, _ = http("GET", f"{jm.url}/config", timeout=2)
            return status == 200
        except OSError:
            return False

    # -- jobs ----------------------------------------------------------------------------------

    def submit(
        self,
        jm: JobManager,
        *job_args: str,
        script: Path = JOB_SCRIPT,
        options: tuple[str, ...] = (),
        timeout: float = 120.0,
    ) -> subprocess.CompletedProcess[str]:
        """``flott run -m <jm> -d [OPTIONS] <script> ARGS`` (the counting job by default)."""
        return subprocess.run(
            [sys.executable, "-m", "flott.cli.main", "run", "-m", jm.rest, "-d", *options, *self._dynamic(),
             str(script), *job_args],
            capture_output=True, text=True, timeout=timeout, cwd=REPO,
        )  # fmt: skip

    @staticmethod
    def job_id_of(run: subprocess.CompletedProcess[str]) -> str:
        m = re.search(r"JobID ([0-9a-f]{32})", run.stdout + run.stderr)
        assert m is not None, f"no job id in: {run.stdout} {run.stderr}"
        return m.group(1)

    def job(self, jm: JobManager, job_id: str) -> tuple[int, Any]:
        return http("GET", f"{jm.url}/jobs/{job_id}")

    def job_state(self, jm: JobManager, job_id: str) -> str | None:
        try:
            status, body = self.job(jm, job_id)
        except OSError:
            return None
        return str(body["state"]) if status == 200 else None

    def wait_state(
        self, jm: JobManager, job_id: str, states: tuple[str, ...], timeout: float = 60.0
    ) -> float:
        """Seconds until ``GET /jobs/:id`` at ``jm`` shows one of ``states``."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if self.job_state(jm, job_id) in states:
                return time.monotonic() - start
            time.sleep(0.05)
        raise AssertionError(
            f"job {job_id} not in {states} within {timeout}s "
            f"(last {self.job_state(jm, job_id)})\n{self.logs()}"
        )


def checkpoint_stats(jm: JobManager, job_id: str) -> dict[str, Any]:
    """``GET /jobs/:id/checkpoints`` at ``jm`` ({} when it does not answer 200)."""
    try:
        status, body = http("GET", f"{jm.url}/jobs/{job_id}/checkpoints", timeout=3)
    except OSError:
        return {}
    return body if status == 200 else {}


def all_tasks_running(c: HaCluster, jm: JobManager, job_id: str) -> bool:
    try:
        status, body = c.job(jm, job_id)
    except OSError:
        return False
    return (
        status == 200
        and body["state"] == "RUNNING"
        and all(v["status"] == "RUNNING" for v in body["vertices"])
    )


def with_suppress_kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def committed_counts(out: Path) -> dict[int, list[int]]:
    seen: dict[int, list[int]] = collections.defaultdict(list)
    if not out.exists():
        return seen
    for p in sorted(out.rglob("*")):
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(out).parts):
            for line in p.read_text().splitlines():
                key, count = line[1:-1].split(",")
                seen[int(key)].append(int(count))
    return seen


def exactly_once_problems(out: Path, n: int) -> list[str]:
    """Empty when every key's committed updates are ``1..count(key)``, each exactly once."""
    seen = committed_counts(out)
    expected = collections.Counter(x % KEYS for x in range(n))
    problems = []
    for key, total in sorted(expected.items()):
        updates = collections.Counter(seen.get(key, []))
        duplicated = sorted(c for c, times in updates.items() if times > 1)
        missing = sorted(set(range(1, total + 1)) - set(updates))
        if duplicated or missing:
            problems.append(
                f"key {key}: {len(duplicated)} duplicated (first {duplicated[:5]}), "
                f"{len(missing)} missing (first {missing[:5]}) of {total}"
            )
    return problems
