"""Flink's own ``bin/flink`` (from the apache-flink wheel in bench/.venv-peers) operating a flott cluster.

Skipped where ``bench/setup`` has not installed the peers (CI has no Flink); run it locally after
``bench/setup``. Each Flink CLI call starts a JVM (~5 s).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_session_cluster import REPO, flott, free_port, get_json

PYFLINK = REPO / "bench" / ".venv-peers" / "lib" / "python3.11" / "site-packages" / "pyflink"
pytestmark = pytest.mark.skipif(
    not (PYFLINK / "bin" / "flink").exists() or shutil.which("java") is None,
    reason="Flink's CLI is not installed (bench/setup installs apache-flink into bench/.venv-peers)",
)


def flink_cli(*args: str, conf_dir: Path) -> subprocess.CompletedProcess[str]:
    java = Path(shutil.which("java") or "java").resolve()
    env = dict(os.environ, JAVA_HOME=str(java.parent.parent), FLINK_CONF_DIR=str(conf_dir))
    return subprocess.run(
        [str(PYFLINK / "bin" / "flink"), *args], capture_output=True, text=True, timeout=120, env=env
    )


@pytest.fixture
def session(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    port = free_port()
    jm = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "flott.cli.main",
            "jobmanager",
            "start",
            "--taskmanagers",
            "2",
            "-D",
            f"rest.port={port}",
            "-D",
            "jobmanager.rpc.port=0",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    conf = tmp_path / "flink-conf"
    shutil.copytree(PYFLINK / "conf", conf)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if get_json(f"http://127.0.0.1:{port}/overview")["taskmanagers"] == 2:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline
            time.sleep(0.2)
        yield f"127.0.0.1:{port}", conf
    finally:
        jm.terminate()
        try:
            jm.wait(timeout=15)
        except subprocess.TimeoutExpired:
            jm.kill()
            jm.wait()


def test_flink_cli_list_savepoint_and_cancel(session: tuple[str, Path], tmp_path: Path) -> None:
    address, conf = session
    run = flott("run", "-m", address, "-d", str(REPO / "examples" / "streaming_counts.py"))
    assert run.returncode == 0, run.stderr
    job_id = run.stdout.strip().split()[-1]

    listed = flink_cli("list", "-m", address, conf_dir=conf)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert f"{job_id} : streaming_counts (RUNNING)" in listed.stdout

    savepoint = flink_cli("savepoint", "-m", address, job_id, str(tmp_path / "sp"), conf_dir=conf)
    assert savepoint.returncode == 0, savepoint.stdout + savepoint.stderr
    assert "Savepoint completed. Path: " in savepoint.stdout
    path = savepoint.stdout.split("Savepoint completed. Path: ")[1].split()[0]
    assert (Path(path.removeprefix("file:")) / "_metadata").is_file()

    cancelled = flink_cli("cancel", "-m", address, job_id, conf_dir=conf)
    assert cancelled.returncode == 0 and f"Cancelled job {job_id}" in cancelled.stdout
    terminated = flink_cli("list", "-a", "-m", address, conf_dir=conf)
    assert f"{job_id} : streaming_counts (CANCELED)" in terminated.stdout
