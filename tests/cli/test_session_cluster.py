"""The session cluster through the CLI a user types: start, submit, list, cancel, stop — real processes."""

from __future__ import annotations

import collections
import contextlib
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def flott(
    *args: str, timeout: float = 60, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flott.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FLOTT_RUN_DIR", str(tmp_path / "run"))
    return tmp_path / "run"


@pytest.fixture
def cluster(run_dir: Path) -> Iterator[tuple[str, list[str]]]:
    port = free_port()
    conf = ["-D", f"rest.port={port}", "-D", "jobmanager.rpc.port=0"]
    started = flott("cluster", "start", "--taskmanagers", "2", *conf)
    assert started.returncode == 0, started.stderr
    # it says where the logs and the processes' output (the jobs' prints among it) go
    assert f"Logs: {run_dir}" in started.stdout and f"{run_dir}/jobmanager-{port}.log" in started.stdout
    pid = int((run_dir / f"cluster-{port}.pid").read_text())
    family = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    assert len(family) == 3, "a JobManager and two TaskManagers"
    try:
        yield f"127.0.0.1:{port}", conf
    finally:
        stopped = flott("cluster", "stop", *conf)
        _, alive = psutil.wait_procs(family, timeout=15)
        for p in alive:
            p.kill()
        assert stopped.returncode == 0, stopped.stderr
        assert not alive, f"processes left after 'flott cluster stop': {[p.pid for p in alive]}"


def test_submit_list_cancel_on_session_cluster(cluster: tuple[str, list[str]]) -> None:
    address, _ = cluster
    overview = get_json(f"http://{address}/overview")
    assert overview["taskmanagers"] == 2 and overview["slots-total"] == 2

    run = flott("run", "-m", address, "-d", str(REPO / "examples" / "streaming_counts.py"))
    assert run.returncode == 0, run.stderr
    job_id = run.stdout.strip().split()[-1]
    assert len(job_id) == 32, run.stdout

    deadline = time.monotonic() + 30
    while get_json(f"http://{address}/jobs/{job_id}")["state"] != "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    listed = flott("list", "-m", address)
    assert listed.returncode == 0 and job_id in listed.stdout and "RUNNING" in listed.stdout

    cancelled = flott("cancel", "-m", address, job_id)
    assert cancelled.returncode == 0, cancelled.stderr
    deadline = time.monotonic() + 30
    while get_json(f"http://{address}/jobs/{job_id}")["state"] != "CANCELED":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert job_id not in flott("list", "-m", address).stdout
    assert "CANCELED" in flott("list", "-m", address, "-a").stdout

    unknown = flott("cancel", "-m", address, "0" * 32)
    assert unknown.returncode != 0 and "not found" in unknown.stderr


def test_attached_run_on_session_cluster_waits_for_result(
    cluster: tuple[str, list[str]], tmp_path: Path
) -> None:
    address, _ = cluster
    run = flott(
        "run",
        "-m",
        address,
        str(REPO / "examples" / "word_count.py"),
        "--output",
        str(tmp_path / "out"),
        "--mode",
        "batch",
    )
    assert run.returncode == 0, run.stderr
    assert "FINISHED" in run.stderr
    lines = [
        line
        for p in (tmp_path / "out").rglob("*")
        if p.is_file() and not p.name.startswith(".")
        for line in p.read_text().splitlines()
    ]
    sys.path.insert(0, str(REPO / "examples"))
    from word_count import SAMPLE

    expected = collections.Counter(w for line in SAMPLE for w in line.split())
    assert sorted(lines) == sorted(f"({w},{n})" for w, n in expected.items())


@contextlib.contextmanager
def standalone_cluster(
    *extra_conf: str, taskmanager_first_s: float = 0.0
) -> Iterator[tuple[str, str, subprocess.Popen[bytes]]]:
    """``flott jobmanager start`` plus one ``flott taskmanager start -m`` registered with it.

    With ``taskmanager_first_s`` the TaskManager starts that long before the JobManager (and
    must still be running when the JobManager starts). Yields (REST address, RPC address, the
    TaskManager's process); stops both by PID.
    """
    rest_port, rpc_port = free_port(), free_port()
    conf = ["-D", f"rest.port={rest_port}", "-D", f"jobmanager.rpc.port={rpc_port}", *extra_conf]
    cli = [sys.executable, "-m", "flott.cli.main"]
    procs: list[subprocess.Popen[bytes]] = []

    def start_jobmanager() -> None:
        procs.append(
            subprocess.Popen(
                [*cli, "jobmanager", "start", *conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
        )

    try:
        if not taskmanager_first_s:
            start_jobmanager()
        tm = subprocess.Popen(
            [*cli, "taskmanager", "start", "-m", f"127.0.0.1:{rpc_port}", *conf],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        procs.insert(0, tm)
        if taskmanager_first_s:
            time.sleep(taskmanager_first_s)
            assert tm.poll() is None, f"the TaskManager exited ({tm.returncode}) before the JobManager"
            start_jobmanager()
        deadline = time.monotonic() + 30
        while True:
            try:
                if get_json(f"http://127.0.0.1:{rest_port}/overview")["taskmanagers"] == 1:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the standalone TaskManager did not register"
            time.sleep(0.2)
        yield f"127.0.0.1:{rest_port}", f"127.0.0.1:{rpc_port}", tm
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_standalone_taskmanager_registers_and_runs_tasks(run_dir: Path, tmp_path: Path) -> None:
    with standalone_cluster() as (address, _, _tm):
        run = flott(
            "run",
            "-m",
            address,
            "-p",
            "1",
            str(REPO / "examples" / "word_count.py"),
            "--output",
            str(tmp_path / "out"),
            "--mode",
            "batch",
        )
        assert run.returncode == 0, run.stderr
        assert any(p.is_file() and not p.name.startswith(".") for p in (tmp_path / "out").rglob("*"))


def test_killed_standalone_taskmanager_fails_job_by_heartbeat_timeout(run_dir: Path) -> None:
    """No driver watches a standalone TaskManager: only its missing heartbeats can tell."""
    with standalone_cluster("-D", "heartbeat.interval=300", "-D", "heartbeat.timeout=2000") as (
        address,
        _,
        tm,
    ):
        base = f"http://{address}"
        run = flott(
            "run", "-m", address, "-d", str(REPO / "examples" / "streaming_counts.py"), "--parallelism", "1"
        )
        assert run.returncode == 0, run.stderr
        job_id = run.stdout.strip().split()[-1]
        deadline = time.monotonic() + 30
        while get_json(f"{base}/jobs/{job_id}")["status-counts"].get("RUNNING", 0) != 2:
            assert time.monotonic() < deadline, "the job's tasks did not all start"
            time.sleep(0.1)
        tm.kill()
        tm.wait()
        killed = time.monotonic()
        while get_json(f"{base}/jobs/{job_id}")["state"] not in ("FAILED", "FAILING"):
            assert time.monotonic() - killed < 10, "the job did not fail after its TaskManager was killed"
            time.sleep(0.1)
        took = time.monotonic() - killed
        assert took < 2.0 + 2.0, f"failure noticed after {took:.1f}s with a 2 s heartbeat timeout"
        assert "heartbeat" in json.dumps(get_json(f"{base}/jobs/{job_id}/exceptions")).lower()


def test_a_job_that_does_not_get_its_slots_fails_after_the_slot_request_timeout(run_dir: Path) -> None:
    conf = ["-D", "slot.request.timeout=2000", "-D", "flott.admission.refuse-unschedulable=false"]
    with standalone_cluster(*conf) as (address, _, _):
        base = f"http://{address}"
        example = str(REPO / "examples" / "streaming_counts.py")
        run = flott("run", "-m", address, "-d", example, "--parallelism", "2")  # one slot only
        assert run.returncode == 0, run.stderr
        job_id = run.stdout.strip().split()[-1]
        submitted = time.monotonic()
        expected = "could not get 2 slots within 2s (got 1)"
        while expected not in json.dumps(get_json(f"{base}/jobs/{job_id}/exceptions")):
            assert time.monotonic() - submitted < 30, "the slot request did not time out"
            time.sleep(0.2)
        assert "NoResourceAvailableError" in json.dumps(get_json(f"{base}/jobs/{job_id}/exceptions"))


def test_taskmanager_started_before_its_jobmanager_registers_once_it_is_up(run_dir: Path) -> None:
    """As in Flink, start order does not matter: the TaskManager keeps retrying with a backoff."""
    conf = ["-D", "heartbeat.timeout=1000", "-D", "cluster.registration.max-timeout=500"]
    # 3 s: longer than the heartbeat timeout, after which it used to give up
    with standalone_cluster(*conf, taskmanager_first_s=3.0) as (_, _, tm):
        assert tm.poll() is None


def test_taskmanager_gives_up_after_its_registration_timeout_with_a_message(run_dir: Path) -> None:
    cli = [sys.executable, "-m", "flott.cli.main"]
    conf = ["-D", "taskmanager.registration.timeout=1 s", "-D", "cluster.registration.max-timeout=200"]
    started = time.monotonic()
    proc = subprocess.run(
        [*cli, "taskmanager", "start", "-m", f"127.0.0.1:{free_port()}", *conf],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert time.monotonic() - started < 30
    assert proc.stderr.startswith("TaskManager failed:"), proc.stderr
    assert "Traceback" not in proc.stderr


def test_cluster_start_on_a_port_in_use_says_so_on_the_console(run_dir: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        started = flott("cluster", "start", "-D", f"rest.port={port}", "-D", "jobmanager.rpc.port=0")
    assert started.returncode == 1
    assert "address already in use" in started.stderr, started.stderr
    assert "Traceback" not in started.stderr
    assert not (run_dir / f"cluster-{port}.pid").exists()


def test_a_second_cluster_start_on_the_same_port_is_refused(cluster: tuple[str, list[str]]) -> None:
    _, conf = cluster
    again = flott("cluster", "start", *conf)
    assert again.returncode == 1 and "already running" in again.stderr, again.stderr


def test_cluster_stop_never_signals_a_process_flott_did_not_start(run_dir: Path) -> None:
    """A stale pid file (a crash, a reboot) may name a process id the kernel gave to another
    program since: `cluster stop` must leave that process alone."""
    port = free_port()
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / f"cluster-{port}.pid").write_text(str(other.pid))
        stopped = flott("cluster", "stop", "-D", f"rest.port={port}")
        assert stopped.returncode == 0, "the cluster is down: nothing left to stop (as Flink's scripts)"
        assert "no longer running" in stopped.stderr and "no process was signalled" in stopped.stderr
        assert other.poll() is None, "cluster stop signalled a process it did not start"
        assert not (run_dir / f"cluster-{port}.pid").exists(), "the stale pid file stays"
    finally:
        other.kill()
        other.wait()
