"""Job logs with ZooKeeper HA (a real ZooKeeper, two JobManager and two TaskManager processes): the
new leader after a SIGKILLed leader serves the log of a job that finished before the failover, and
``flott logs -f`` of a job running across it, started through the standby before the leader died,
follows it to its final status."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.highavailability.ha_cluster import REPO, HaCluster, http
from tests.highavailability.zookeeper_server import ZooKeeperServer

PRINTING_JOB = REPO / "tests" / "rest" / "printing_job.py"


@pytest.fixture
def cluster(zookeeper: ZooKeeperServer, zk_root: str, tmp_path: Path) -> Iterator[HaCluster]:
    c = HaCluster(zookeeper.hosts, tmp_path / "cluster", zk_root, 3000)
    try:
        yield c
    finally:
        c.close()


def _logs(
    c: HaCluster, rest: str, job_id: str, *flags: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flott.cli.main", "logs", "-m", rest, *flags, *c._dynamic(), job_id],
        capture_output=True, text=True, timeout=timeout, cwd=REPO,
    )  # fmt: skip


def _values(out: str) -> set[int]:
    return {int(line.rsplit(" ", 1)[1]) for line in out.splitlines() if " | value " in line}


def test_the_new_leader_serves_the_logs_of_jobs_before_and_across_the_failover(cluster: HaCluster) -> None:
    leader, standby = cluster.start_leader_and_standby()
    run = cluster.submit(leader, "20", "0", "2", script=PRINTING_JOB)
    assert run.returncode == 0, run.stderr
    finished = cluster.job_id_of(run)
    cluster.wait_state(leader, finished, ("FINISHED",))
    before = _logs(cluster, leader.rest, finished)
    assert before.returncode == 0 and _values(before.stdout) == set(range(20)), before.stdout + before.stderr

    run = cluster.submit(leader, "100", "100", "2", script=PRINTING_JOB)
    assert run.returncode == 0, run.stderr
    across = cluster.job_id_of(run)
    deadline = time.monotonic() + 60
    while True:
        status, page = http("GET", f"{leader.url}/jobs/{across}/logs")
        if status == 200 and any(line["kind"] == "stdout" for line in page["lines"]):
            break
        assert time.monotonic() < deadline, (status, page)
        time.sleep(0.2)

    # followed through the standby (it forwards to whoever leads; 503s while nobody does are retried)
    follower = subprocess.Popen(
        [sys.executable, "-m", "flott.cli.main", "logs", "-m", standby.rest, "-f", *cluster._dynamic(),
         across],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    cluster.kill(leader)
    new = cluster.wait_leader(30, other_than=leader)
    assert new is standby
    after = _logs(cluster, new.rest, finished)
    assert after.returncode == 0, after.stderr
    assert after.stdout == before.stdout, "the same log, read from the HA storage directory"
    followed = _logs(cluster, new.rest, finished, "-f")
    assert followed.returncode == 0 and followed.stdout.splitlines()[-1] == f"Job {finished} FINISHED."

    try:
        out, err = follower.communicate(timeout=180)
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait(10)
    assert follower.returncode == 0, (out[-3000:], err[-3000:], cluster.logs())
    lines = out.splitlines()
    assert lines[-1] == f"Job {across} FINISHED."
    assert _values(out) == set(range(100)), "the recovered run printed every value"
    running = [line for line in lines if line.startswith("== Job RUNNING")]
    assert len(running) >= 2, "one RUNNING per JobManager that ran the job"
    assert lines[-2].startswith("== Job FINISHED")
    afterwards = _logs(cluster, new.rest, across)
    assert afterwards.stdout.splitlines() == lines[:-1], "what was followed is what the log keeps"
