"""Application mode: a cluster for one program's job, real processes end to end.

``flott run-application`` starts ``flott jobmanager start-application`` (MiniDispatcher,
TaskExecutors started on demand, the program in a child process submitting over REST) and the
cluster goes away with its job. Every process of a run carries a marker in its command line
(``-D test.marker=...`` travels to the TaskExecutors and the program), so the tests can check
by PID that nothing is left behind.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from flott.cluster.application_cluster import application_job_id
from flott.configuration import Configuration
from flott.runtime.dispatcher.mini_dispatcher import ApplicationStatus
from tests.e2e.conftest import read_output_lines

KEYS = 7
FLOTT = [sys.executable, "-m", "flott.cli.main"]

JOB = """
import sys, time
from flott.common import Types
from flott.common.serialization import Encoder
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.file_sink import FileSink
from flott.datastream.connectors.number_seq import NumberSequenceSource

out, n = sys.argv[1], int(sys.argv[2])
mode = sys.argv[3] if len(sys.argv) > 3 else ""

def pair(x):
    if mode == "fail" and x == 100:
        raise ValueError("boom at record 100")
    if mode == "slow" and x % 50 == 0:
        time.sleep(0.01)
    return (x % 7, 1)

env = StreamExecutionEnvironment.get_execution_environment()
(
    env.from_source(NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(), "n").uid("numbers")
    .map(pair, output_type=Types.TUPLE([Types.LONG(), Types.LONG()])).uid("pairs")
    .key_by(lambda t: t[0])
    .reduce(lambda a, b: (a[0], a[1] + b[1])).uid("counts")
    .sink_to(FileSink.for_row_format(out, Encoder.simple_string_encoder()).build()).uid("files")
)
if mode == "async":
    env.execute_async("app-count")  # submits and ends: nobody fetches the result
else:
    env.execute("app-count")
if mode == "fail-after":
    raise RuntimeError("writing the report failed")
if mode == "twice":
    env.from_collection([1]).print()
    try:
        env.execute("second job")
    except Exception as e:
        print("second job:", e, file=sys.stderr)
"""

HA_JOB = """
import sys, time
from flott.common import Types
from flott.common.restart_strategy import RestartStrategies
from flott.common.serialization import Encoder
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.file_sink import FileSink
from flott.datastream.connectors.number_seq import NumberSequenceSource

out, checkpoints, n = sys.argv[1], sys.argv[2], int(sys.argv[3])

def pair(x):
    if x % 20 == 0:
        time.sleep(0.005)
    return (x % 7, 1)

env = StreamExecutionEnvironment.get_execution_environment()
env.set_max_parallelism(64)
env.enable_checkpointing(300)
env.get_checkpoint_config().set_checkpoint_storage_dir(checkpoints)
env.set_restart_strategy(RestartStrategies.fixed_delay_restart(20, 300))
(
    env.from_source(NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(), "n").uid("numbers")
    .map(pair, output_type=Types.TUPLE([Types.LONG(), Types.LONG()])).uid("pairs")
    .key_by(lambda t: t[0])
    .reduce(lambda a, b: (a[0], a[1] + b[1])).uid("counts")
    .sink_to(FileSink.for_row_format(out, Encoder.simple_string_encoder()).build()).uid("files")
)
env.execute("ha application")
"""

NO_JOB = """
print("preparing")
raise RuntimeError("the program gave up before building a job")
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class App:
    """One application run's files and marker."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.marker = uuid.uuid4().hex
        self.script = tmp_path / "job.py"
        self.script.write_text(JOB)
        self.out = tmp_path / "out"
        self.tmp = tmp_path
        monkeypatch.setenv("FLOTT_RUN_DIR", str(tmp_path / "run"))

    @property
    def conf(self) -> list[str]:
        return [
            "-D",
            f"test.marker={self.marker}",
            "-D",
            "heartbeat.interval=500",
            "-D",
            "heartbeat.timeout=5000",
        ]

    def run(self, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*FLOTT, *args], capture_output=True, text=True, timeout=timeout)

    def processes(self) -> list[psutil.Process]:
        found = []
        for p in psutil.process_iter(["cmdline"]):
            if any(self.marker in part for part in p.info["cmdline"] or ()):
                found.append(p)
        return found

    def assert_nothing_left(self, timeout_s: float = 15.0) -> None:
        deadline = time.monotonic() + timeout_s
        while (left := self.processes()) and time.monotonic() < deadline:
            time.sleep(0.1)
        for p in left:
            p.kill()
        assert not left, f"processes left behind: {[(p.pid, p.info['cmdline'][:6]) for p in left]}"


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[App]:
    a = App(tmp_path, monkeypatch)
    yield a
    for p in a.processes():
        p.kill()


def flat(text: str) -> str:
    """Output with its line wrapping undone (rich wraps the CLI's messages at the console width)."""
    return " ".join(text.split())


def job_id_of(output: str) -> str:
    for line in output.splitlines():
        if line.startswith("Job has been submitted with JobID "):
            return line.split()[-1]
    raise AssertionError(f"no JobID line in {output!r}")


def assert_counts(out: Path, n: int) -> None:
    """Every key's running count 1..count(key), each once (a STREAMING reduce's updates)."""
    seen: dict[int, list[int]] = collections.defaultdict(list)
    for line in read_output_lines(out):
        key, count = line[1:-1].split(",")
        seen[int(key)].append(int(count))
    expected = collections.Counter(x % KEYS for x in range(n))
    assert {k: sorted(v) for k, v in seen.items()} == {k: list(range(1, c + 1)) for k, c in expected.items()}


# --------------------------------------------------------------------------- statuses and job ids


def test_application_status_exit_codes_are_flinks() -> None:
    assert [s.process_exit_code for s in ApplicationStatus] == [0, 1443, 0, 1445]
    assert ApplicationStatus.from_job_status("FINISHED") is ApplicationStatus.SUCCEEDED
    assert ApplicationStatus.from_job_status("FAILED") is ApplicationStatus.FAILED
    assert ApplicationStatus.from_job_status("CANCELED") is ApplicationStatus.CANCELED
    assert ApplicationStatus.from_job_status("SUSPENDED") is ApplicationStatus.UNKNOWN


def test_job_id_is_derived_from_the_cluster_id_with_ha() -> None:
    assert application_job_id(Configuration()) is None
    ha = {"high-availability.type": "zookeeper", "high-availability.cluster-id": "/app-1"}
    first = application_job_id(Configuration(ha))
    assert first is not None and len(first) == 32 and int(first, 16) >= 0
    assert application_job_id(Configuration(ha)) == first
    assert application_job_id(Configuration({**ha, "high-availability.cluster-id": "/app-2"})) != first
    fixed = "0123456789abcdef0123456789abcdef"
    assert application_job_id(Configuration({**ha, "$internal.pipeline.job-id": fixed})) == fixed

    from flott.datastream import StreamExecutionEnvironment
    from flott.graph.job_graph_generator import create_job_graph

    env = StreamExecutionEnvironment.get_execution_environment({"$internal.pipeline.job-id": first})
    env.from_collection([1, 2]).print()
    assert create_job_graph(env.get_stream_graph("fixed")).job_id == first


# --------------------------------------------------------------------------- flott run-application


def test_attached_application_prints_its_result_and_exits_0(app: App) -> None:
    """The program's one job runs on two TaskExecutors and its result is printed; the program's
    second ``execute()`` is refused (the application's status is its one job's)."""
    n = 3000
    started = time.monotonic()
    done = app.run("run-application", "-p", "2", *app.conf, str(app.script), str(app.out), str(n), "twice")
    took = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    job_id = job_id_of(done.stderr)
    assert f"Job {job_id} FINISHED" in done.stderr
    assert "this application cluster runs exactly one job" in flat(done.stderr)
    assert_counts(app.out, n)
    app.assert_nothing_left()
    print(f"attached application: {took:.1f} s")


def test_failing_job_ends_the_application_failed_with_its_cause(app: App) -> None:
    done = app.run("run-application", *app.conf, str(app.script), str(app.out), "1000", "fail")
    assert done.returncode == ApplicationStatus.FAILED.process_exit_code % 256 == 163, done.stderr
    # as `flott run` reports it: the job's cause, then the user's frames on the TaskExecutor
    assert "failed: ValueError: boom at record 100 in task" in flat(done.stderr)
    assert 'raise ValueError("boom at record 100")' in done.stderr
    job_id_of(done.stderr)
    app.assert_nothing_left()


def test_program_failing_after_its_job_succeeded_fails_the_application(app: App) -> None:
    """As in Flink the application is the program: main() raising after the job fails it."""
    done = app.run("run-application", *app.conf, str(app.script), str(app.out), "500", "fail-after")
    assert done.returncode == 163, done.stderr
    job_id_of(done.stderr)
    assert "then failed (exit code 1): " in flat(done.stderr)
    assert "RuntimeError: writing the report failed" in flat(done.stderr)
    assert_counts(app.out, 500)  # the job itself finished and committed its output
    app.assert_nothing_left()


def test_detached_returns_at_once_and_the_cluster_ends_with_its_job(app: App) -> None:
    n = 20_000  # about 4 s of sleeping in the job
    started = time.monotonic()
    done = app.run("run-application", "-d", *app.conf, str(app.script), str(app.out), str(n), "slow")
    returned_s = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    job_id = job_id_of(done.stdout)
    assert app.processes(), "the application cluster should still be running its job"
    deadline = time.monotonic() + 90
    while app.processes() and time.monotonic() < deadline:
        time.sleep(0.2)
    app.assert_nothing_left(timeout_s=0)
    ended_s = time.monotonic() - started
    log = next((app.tmp / "run").glob("application-*.log")).read_text()
    assert f"Job has been submitted with JobID {job_id}" in log
    assert_counts(app.out, n)
    print(f"detached: returned after {returned_s:.1f} s, cluster gone after {ended_s:.1f} s")


def test_program_that_fails_before_submitting_fails_the_application(app: App) -> None:
    no_job = app.tmp / "no_job.py"
    no_job.write_text(NO_JOB)
    done = app.run("run-application", *app.conf, str(no_job))
    assert done.returncode == 163, done.stderr
    assert "preparing" in done.stdout
    assert "RuntimeError: the program gave up before building a job" in done.stderr
    assert "before submitting a job" in done.stderr
    # one line, as `flott run` prints it (-v for the traceback), not a traceback
    assert "The program failed (no_job.py, line" in done.stderr
    assert "Traceback (most recent call last)" not in done.stderr
    app.assert_nothing_left()


def test_attached_program_that_does_not_wait_ends_after_the_result_timeout(app: App) -> None:
    conf = [*app.conf, "-D", "application.result-retrieval-timeout=500 ms"]
    done = app.run("run-application", *conf, str(app.script), str(app.out), "500", "async")
    assert done.returncode == 0, done.stderr
    assert_counts(app.out, 500)
    app.assert_nothing_left()


# --------------------------------------------------------------------------- jobmanager start-application


def _start_jobmanager(app: App, port: int, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*FLOTT, "jobmanager", "start-application", "-D", f"rest.port={port}", "-D", "jobmanager.rpc.port=0",
         *app.conf, str(app.script), str(app.out), "10000000", "slow"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _wait_running(app: App, port: int, jm: subprocess.Popen[str]) -> str:
    import json
    import urllib.request

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and jm.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/jobs/overview", timeout=5) as r:
                jobs = json.loads(r.read())["jobs"]
            if jobs and jobs[0]["state"] == "RUNNING":
                return str(jobs[0]["jid"])
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError("the application's job did not reach RUNNING")


def test_cancelled_job_ends_the_jobmanager_at_once_and_sigterm_ends_it_unknown(app: App) -> None:
    port = free_port()
    jm = _start_jobmanager(app, port)
    try:
        job_id = _wait_running(app, port, jm)
        cancelled = app.run("cancel", "-m", f"127.0.0.1:{port}", job_id, timeout=30)
        assert cancelled.returncode == 0, cancelled.stderr
        assert jm.wait(timeout=30) == ApplicationStatus.CANCELED.process_exit_code == 0
    finally:
        if jm.poll() is None:
            jm.kill()
        jm.communicate(timeout=10)
    app.assert_nothing_left()

    port = free_port()
    jm = _start_jobmanager(app, port)
    try:
        _wait_running(app, port, jm)
        jm.send_signal(signal.SIGTERM)
        assert jm.wait(timeout=30) == ApplicationStatus.UNKNOWN.process_exit_code % 256 == 165
    finally:
        if jm.poll() is None:
            jm.kill()
        jm.communicate(timeout=10)
    app.assert_nothing_left()


# --------------------------------------------------------------------------- with ZooKeeper HA


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from tests.highavailability.zookeeper_server import ZooKeeperServer, find_classpath

    classpath = find_classpath()
    if classpath is None:
        pytest.skip("ZooKeeper is not installed (java and the zookeeper jars; scripts/test installs them)")
    server = ZooKeeperServer(tmp_path_factory.mktemp("zookeeper"), classpath)
    server.start()
    try:
        yield server.hosts
    finally:
        server.stop()


def test_ha_application_resumes_after_losing_its_jobmanager_and_runs_its_job_once(
    app: App, zookeeper: str
) -> None:
    """SIGKILL the application's JobManager mid-job (its TaskExecutors and program die with it),
    start it again with the same cluster id: it recovers the job from its latest checkpoint, the
    program's ``main()`` runs again, finds the job under its deterministic id and attaches to it
    instead of submitting it twice; every update is committed exactly once."""
    n = 40_000
    script = app.tmp / "ha_job.py"
    script.write_text(HA_JOB)
    ha = {
        "high-availability.type": "zookeeper",
        "high-availability.zookeeper.quorum": zookeeper,
        "high-availability.storageDir": (app.tmp / "ha").as_uri(),
        "high-availability.cluster-id": f"/application-{app.marker}",
        "high-availability.zookeeper.client.session-timeout": "2000",
    }
    job_id = application_job_id(Configuration(ha))
    conf = [*app.conf, "-D", f"rest.port={free_port()}", "-D", "jobmanager.rpc.port=0"]
    conf += [arg for key, value in ha.items() for arg in ("-D", f"{key}={value}")]
    cmd = [*FLOTT, "jobmanager", "start-application", "-p", "2", *conf]
    cmd += [str(script), str(app.out), (app.tmp / "chk").as_uri(), str(n)]

    with (app.tmp / "first.log").open("wb") as log:
        first = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not (app.out.exists() and read_output_lines(app.out)):
            assert first.poll() is None, (app.tmp / "first.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "no checkpoint committed output"
            time.sleep(0.1)
    finally:
        first.kill()
        first.wait(timeout=10)
    app.assert_nothing_left()  # the TaskExecutors and the program die with their JobManager

    second = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
    assert second.returncode == 0, second.stdout + second.stderr[-3000:]
    said = flat(second.stderr)
    assert f"Job {job_id} is known to this cluster already" in said, said[-3000:]
    assert f"Job {job_id} FINISHED" in said
    assert_counts(app.out, n)
    app.assert_nothing_left()


TM_GATE = """
# Test hook of one test (tests/e2e/test_application_mode.py), loaded by every Python process of
# the run through PYTHONPATH: the first TaskExecutor starts at once, the others wait (before
# flott is even imported, so they cannot register) until the test creates the file "open".
import os, pathlib, time

if b"flott.runtime.taskexecutor" in pathlib.Path("/proc/self/cmdline").read_bytes().split(b"\\0"):
    _gate = pathlib.Path(os.environ["FLOTT_TEST_TM_GATE"])
    try:
        os.close(os.open(_gate / "first", os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        _deadline = time.monotonic() + 60
        while not (_gate / "open").exists() and time.monotonic() < _deadline:
            time.sleep(0.05)
"""


def test_ha_application_admits_its_job_before_its_own_second_taskmanager_registered(
    app: App, zookeeper: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The HA application cluster starts ``ceil(parallelism / slots)`` TaskExecutors itself; its
    job must not be refused as "needing more slots than the cluster has" while one of them has
    not registered yet (under load the program can submit first). The second TaskExecutor is held
    back before it can register until the job has been admitted, which makes the race certain."""
    gate = app.tmp / "gate"
    gate.mkdir()
    (gate / "sitecustomize.py").write_text(TM_GATE)
    monkeypatch.setenv("FLOTT_TEST_TM_GATE", str(gate))
    path = [str(gate), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(path))
    ha = {
        "high-availability.type": "zookeeper",
        "high-availability.zookeeper.quorum": zookeeper,
        "high-availability.storageDir": (app.tmp / "ha").as_uri(),
        "high-availability.cluster-id": f"/application-{app.marker}",
    }
    job_id = application_job_id(Configuration(ha))
    port = free_port()
    conf = [*app.conf, "-D", f"rest.port={port}", "-D", "jobmanager.rpc.port=0"]
    conf += [arg for key, value in ha.items() for arg in ("-D", f"{key}={value}")]
    n = 2000
    cmd = [*FLOTT, "jobmanager", "start-application", "-p", "2", *conf, str(app.script), str(app.out), str(n)]
    with (app.tmp / "app.log").open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while rest_status(port, f"/jobs/{job_id}") != 200:  # admitted: the job is known
            assert proc.poll() is None, (app.tmp / "app.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the job was never submitted"
            time.sleep(0.1)
        assert len(rest_json(port, "/taskmanagers")["taskmanagers"]) == 1  # the other is held back
        (gate / "open").touch()
        code = proc.wait(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    said = flat((app.tmp / "app.log").read_text())
    assert code == 0, said[-3000:]
    assert f"Job {job_id} FINISHED" in said, said[-3000:]
    assert_counts(app.out, n)
    app.assert_nothing_left()


def rest_json(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
        return json.loads(response.read())


def rest_status(port: int, path: str) -> int:
    """The HTTP status of a GET (0: nobody answered yet)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as response:
            return int(response.status)
    except urllib.error.HTTPError as e:
        return int(e.code)
    except OSError:
        return 0
