"""The client checks the cluster's version before it submits, as Flink's client does.

Against real JobManager processes: a flott session cluster of this version takes the job; a
flott session cluster installed at another version (its package metadata says 9.9.9, so its
REST endpoint reports ``flott-9.9.9``), and a real Apache Flink 2.3 JobManager (skipped
where ``bench/setup`` has not installed it), are refused with both versions named, before
anything is uploaded.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from flott.rest.version import FLINK_REVISION

REPO = Path(__file__).resolve().parents[2]
PYFLINK = REPO / "bench" / ".venv-peers" / "lib" / "python3.11" / "site-packages" / "pyflink"

JOBMANAGER = [sys.executable, "-m", "flott.cli.main", "jobmanager", "start"]

JOB = """
from flott.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.from_collection([1, 2, 3]).print()
env.execute("version-checked")
"""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(tmp_path: Path, extra_path: tuple[str, ...] = ()) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*extra_path, str(REPO), env.get("PYTHONPATH", "")])
    env["FLOTT_LOG_DIR"] = str(tmp_path / "log")
    env.pop("FLOTT_CONF_DIR", None)
    env.pop("FLINK_CONF_DIR", None)
    return env


def _config_of(port: int, deadline_s: float, proc: subprocess.Popen[bytes]) -> dict[str, object]:
    deadline = time.monotonic() + deadline_s
    while True:
        with contextlib.suppress(OSError, ValueError):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/config", timeout=5) as r:
                return dict(json.loads(r.read()))
        assert proc.poll() is None, f"the JobManager exited with {proc.returncode}"
        assert time.monotonic() < deadline, "the JobManager's REST endpoint did not answer"
        time.sleep(0.3)


@contextlib.contextmanager
def flott_session(tmp_path: Path, extra_path: tuple[str, ...] = ()) -> Iterator[int]:
    port = free_port()
    proc = subprocess.Popen(
        [*JOBMANAGER, "-D", f"rest.port={port}", "-D", "jobmanager.rpc.port=0", "-D", "blob.server.port=0"],
        env=_env(tmp_path, extra_path),
        cwd=tmp_path,  # not the checkout: `python -m` puts the cwd first, and its flott.egg-info with it
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _config_of(port, 60, proc)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def flott_run(tmp_path: Path, port: int) -> subprocess.CompletedProcess[str]:
    job = tmp_path / "job.py"
    job.write_text(JOB)
    return subprocess.run(
        [sys.executable, "-m", "flott.cli.main", "run", "-m", f"127.0.0.1:{port}", "-d", str(job)],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(tmp_path),
    )


def test_a_cluster_of_this_version_takes_the_job(tmp_path: Path) -> None:
    with flott_session(tmp_path) as port:
        done = flott_run(tmp_path, port)
        assert done.returncode == 0, done.stderr
        assert "Job has been submitted with JobID" in done.stdout
        # the JobManager's runtime log went to its file, not to the console
        log_file = next((tmp_path / "log").glob("flott-*-standalonesession-*.log"))
        log = log_file.read_text()
        assert f"REST at http://127.0.0.1:{port}" in log and "submitted" in log
        listed = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/jobmanager/logs").read())
        assert log_file.name in [entry["name"] for entry in listed["logs"]], listed


def test_a_flott_cluster_of_another_version_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other-install"
    meta = other / "flott-9.9.9.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: flott\nVersion: 9.9.9\n")
    with flott_session(tmp_path, (str(other),)) as port:
        done = flott_run(tmp_path, port)
        jobs = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/jobs", timeout=5).read())
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "The job could not be submitted" in lines[0]
    assert f"runs flott-9.9.9 (REST API v1), this client is {FLINK_REVISION}" in lines[0]
    assert jobs["jobs"] == [], "nothing was submitted"


@pytest.mark.skipif(
    not (PYFLINK / "bin" / "jobmanager.sh").exists() or shutil.which("java") is None,
    reason="Apache Flink is not installed (bench/setup installs apache-flink into bench/.venv-peers)",
)
def test_an_apache_flink_cluster_is_refused(tmp_path: Path) -> None:
    conf = tmp_path / "flink-conf"
    conf.mkdir()
    for f in (PYFLINK / "conf").iterdir():
        if f.name != "config.yaml":
            shutil.copy(f, conf / f.name)
    original = (PYFLINK / "conf" / "config.yaml").read_text()
    m = re.search(r"^\s*all:\s*(--add-exports.*)$", original, re.M)
    port = free_port()
    settings = {
        "env.java.opts.all": m.group(1).strip() if m else "",
        "jobmanager.bind-host": "127.0.0.1",
        "jobmanager.rpc.address": "127.0.0.1",
        "jobmanager.rpc.port": free_port(),
        "jobmanager.memory.process.size": "1024m",
        "blob.server.port": free_port(),
        "rest.address": "127.0.0.1",
        "rest.bind-address": "127.0.0.1",
        "rest.port": port,
        "io.tmp.dirs": str(tmp_path),
    }
    (conf / "config.yaml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in settings.items()))
    java = Path(shutil.which("java") or "java").resolve()
    env = dict(
        os.environ,
        FLINK_CONF_DIR=str(conf),
        FLINK_LOG_DIR=str(tmp_path / "flink-log"),
        FLINK_HOME=str(PYFLINK),
        JAVA_HOME=str(java.parent.parent),
    )
    proc = subprocess.Popen(
        [str(PYFLINK / "bin" / "jobmanager.sh"), "start-foreground"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        offered = _config_of(port, 120, proc)
        done = flott_run(tmp_path, port)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert done.returncode == 1
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert (
        f"is Apache Flink {offered['flink-version']} (revision {offered['flink-revision']}), not flott"
        in line
    )
    assert FLINK_REVISION.removeprefix("flott-") in line
