"""A job's own log on a real session cluster (``flott cluster start``: a JobManager process and
TaskExecutor processes): what the job's tasks printed, tagged, and its status changes, served by
``GET /jobs/:jobid/logs`` and printed by ``flott logs`` after the job ended, also when a
TaskExecutor was SIGKILLed under it; and the JobManager's cluster gauges and every process's
garbage collector metrics."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.rest.session_cluster import SessionCluster, session_cluster

JOB = Path(__file__).resolve().parent / "printing_job.py"
FAST = (
    "-D", "taskmanager.numberOfTaskSlots=2", "-D", "heartbeat.interval=300", "-D", "heartbeat.timeout=3000"
)
_LINE = re.compile(
    r"^(?P<task>.+) \((?P<sub>\d+)/(?P<par>\d+)\) #(?P<attempt>\d+) (?P<mark>[|!]) (?P<text>.*)$"
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionCluster]:
    with session_cluster(tmp_path_factory.mktemp("joblogs") / "run", 2, *FAST) as c:
        yield c


def _task_lines(out: str) -> list[re.Match[str]]:
    return [m for line in out.splitlines() if (m := _LINE.match(line))]


def _metrics(cluster: SessionCluster, path: str, names: list[str]) -> dict[str, str]:
    answer = cluster.get_json(f"{path}?get={','.join(names)}")
    return {m["id"]: m["value"] for m in answer}


def _wait_metrics(
    cluster: SessionCluster, path: str, expected: dict[str, str], timeout_s: float = 30.0
) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        got = _metrics(cluster, path, list(expected))
        if got == expected:
            return
        assert time.monotonic() < deadline, (got, expected)
        time.sleep(0.3)


def test_a_finished_jobs_output_is_printed_after_it_ended(cluster: SessionCluster) -> None:
    job_id = cluster.submit(JOB, "30", "0", "2")
    cluster.wait_state(job_id, "FINISHED")

    printed = cluster.flott("logs", "-m", cluster.address, job_id)
    assert printed.returncode == 0, printed.stderr
    lines = _task_lines(printed.stdout)
    values = sorted(int(m["text"].split()[1]) for m in lines if m["text"].startswith("value "))
    assert values == list(range(30)), printed.stdout
    tenths = {m["text"] for m in lines if m["mark"] == "!"}
    assert tenths == {"tenth 0", "tenth 10", "tenth 20"}, "stderr is captured and marked"
    sink = sorted(int(m["text"].split("> ")[1]) for m in lines if "> " in m["text"])
    assert sink == [2 * i for i in range(30)], "the print sink's lines too"
    for m in lines:
        assert m["task"] == "Map -> Sink: Print to Std. Out" and m["par"] == "2" and m["attempt"] == "0"
    status_lines = [line for line in printed.stdout.splitlines() if line.startswith("== ")]
    assert status_lines[0].startswith("== Job RUNNING") and status_lines[-1].startswith("== Job FINISHED")
    assert printed.stdout.splitlines()[-1].startswith("== Job FINISHED"), "the final status is last"

    followed = cluster.flott("logs", "-m", cluster.address, "-f", job_id)
    assert followed.returncode == 0, followed.stderr
    assert followed.stdout.splitlines()[-1] == f"Job {job_id} FINISHED."
    tail = cluster.flott("logs", "-m", cluster.address, "--tail", "1", job_id)
    assert tail.stdout.splitlines() == [printed.stdout.splitlines()[-1]]

    page = cluster.get_json(f"/jobs/{job_id}/logs?max=5")
    assert (page["jid"], page["from"], page["next"], page["status"]) == (job_id, 0, 5, "FINISHED")
    assert not page["complete"], "more lines follow this page"
    assert [line["index"] for line in page["lines"]] == [0, 1, 2, 3, 4]
    rest = cluster.get_json(f"/jobs/{job_id}/logs?from=5&max=10000")
    assert rest["complete"] and rest["next"] == 5 + len(rest["lines"])
    first = next(line for line in page["lines"] + rest["lines"] if line["kind"] == "stdout")
    assert first["task"].startswith("Map -> Sink: Print to Std. Out (") and first["attempt"] == 0
    assert first["subtask"] in (0, 1) and first["timestamp"] > 0


def test_hostile_job_ids_and_offsets_are_refused_clearly(cluster: SessionCluster) -> None:
    job_id = cluster.submit(JOB, "3")
    cluster.wait_state(job_id, "FINISHED")
    for path, status in [
        (f"/jobs/{'0' * 32}/logs", 404),
        ("/jobs/..%2F..%2Fetc/logs", 400),
        ("/jobs/%2e%2e/logs", 400),
        (f"/jobs/{'A' * 32}/logs", 400),
        ("/jobs/xyz/logs", 400),
        (f"/jobs/{job_id}/logs?from=abc", 400),
        (f"/jobs/{job_id}/logs?from=1e3", 400),
        (f"/jobs/{job_id}/logs?from=99999999999999999999", 400),
        (f"/jobs/{job_id}/logs?max=0", 400),
        (f"/jobs/{job_id}/logs?max=10001", 400),
        (f"/jobs/{job_id}/logs?max=-1", 400),
    ]:
        got, ctype, body = cluster.get(path)
        assert got == status, (path, got, body[:300])
        assert ctype == "application/json; charset=UTF-8", path
        errors = json.loads(body)["errors"]
        assert errors and isinstance(errors[0], str) and "Traceback" not in errors[0], (path, errors)
    beyond = cluster.get_json(f"/jobs/{job_id}/logs?from=1000000")
    assert beyond["lines"] == [] and beyond["complete"] and beyond["from"] == beyond["next"]
    before = cluster.get_json(f"/jobs/{job_id}/logs?from=-1000000")
    assert before["from"] == 0 and before["lines"]
    unknown = cluster.flott("logs", "-m", cluster.address, "0" * 32)
    assert unknown.returncode == 1 and "not found" in unknown.stderr, unknown.stderr
    bad = cluster.flott("logs", "-m", cluster.address, "nope")
    assert bad.returncode == 1 and "not a valid ID" in bad.stderr, bad.stderr


def test_jobmanager_gauges_count_task_managers_slots_and_running_jobs(cluster: SessionCluster) -> None:
    _wait_metrics(
        cluster,
        "/jobmanager/metrics",
        {
            "numRegisteredTaskManagers": "2",
            "taskSlotsTotal": "4",
            "taskSlotsAvailable": "4",
            "numRunningJobs": "0",
        },
    )
    job_id = cluster.submit(JOB, "60", "100", "2")
    cluster.wait_state(job_id, "RUNNING")
    _wait_metrics(cluster, "/jobmanager/metrics", {"numRunningJobs": "1", "taskSlotsAvailable": "2"})
    cluster.wait_state(job_id, "FINISHED", 90)
    _wait_metrics(cluster, "/jobmanager/metrics", {"numRunningJobs": "0", "taskSlotsAvailable": "4"})


_GC = [f"Status.Python.GC.gen{g}.{m}" for g in range(3) for m in ("Count", "Time", "Collected")]
_JVM_GC = [f"Status.JVM.GarbageCollector.gen{g}.{m}" for g in range(3) for m in ("Count", "Time")]


def test_gc_metrics_of_every_process_are_present_and_never_decrease(cluster: SessionCluster) -> None:
    tms = [tm["id"] for tm in cluster.get_json("/taskmanagers")["taskmanagers"]]
    paths = ["/jobmanager/metrics", *(f"/taskmanagers/{tm}/metrics" for tm in tms)]
    before = {p: _metrics(cluster, p, _GC + _JVM_GC) for p in paths}
    for p, values in before.items():
        assert set(values) == set(_GC + _JVM_GC), (p, values)
        assert all(int(v) >= 0 for v in values.values()), (p, values)
        for g in range(3):
            own, jvm = f"Status.Python.GC.gen{g}.Count", f"Status.JVM.GarbageCollector.gen{g}.Count"
            assert values[own] == values[jvm], (p, g)
    job_id = cluster.submit(JOB, "200", "0", "2")
    cluster.wait_state(job_id, "FINISHED")
    time.sleep(1.2)  # the REST endpoint's metric fetch is at most 1 s old
    for p in paths:
        after = _metrics(cluster, p, _GC + _JVM_GC)
        assert all(int(after[k]) >= int(before[p][k]) for k in after), (p, before[p], after)
    for tm in tms:  # Flink's TaskManager details carry them too
        collectors = cluster.get_json(f"/taskmanagers/{tm}")["metrics"]["garbageCollectors"]
        assert [c["name"] for c in collectors] == ["gen0", "gen1", "gen2"], collectors
        assert all(c["count"] >= 0 and c["time"] >= 0 for c in collectors), collectors
    assert int(_metrics(cluster, "/jobmanager/metrics", ["Status.Python.GC.gen0.Count"])[
        "Status.Python.GC.gen0.Count"]) > 0, "a JobManager that served a job has collected"


def _task_executor_pids(cluster: SessionCluster) -> list[int]:
    return [
        p.pid for p in psutil.Process(cluster.pid).children(recursive=True)
        if "flott.runtime.taskexecutor" in " ".join(p.cmdline())
    ]


def test_a_sigkilled_task_executor_shows_as_a_restart_and_follow_ends_with_the_status(
    tmp_path: Path,
) -> None:
    with session_cluster(tmp_path / "run", 2, *FAST) as cluster:
        job_id = cluster.submit(JOB, "60", "100", "2")
        deadline = time.monotonic() + 60
        while not any(
            line["kind"] == "stdout" for line in cluster.get_json(f"/jobs/{job_id}/logs")["lines"]
        ):
            assert time.monotonic() < deadline, "the job printed nothing"
            time.sleep(0.2)
        follower = subprocess.Popen(
            [sys.executable, "-m", "flott.cli.main", "logs", "-m", cluster.address, "-f", job_id],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cluster.env,
        )
        try:
            victims = _task_executor_pids(cluster)
            assert len(victims) == 2, victims
            os.kill(victims[0], signal.SIGKILL)
            out, err = follower.communicate(timeout=150)
        finally:
            if follower.poll() is None:
                follower.kill()
                follower.wait(10)
        assert follower.returncode == 0, (out[-3000:], err[-2000:])
        lines = out.splitlines()
        assert lines[-1] == f"Job {job_id} FINISHED.", lines[-5:]
        restarting = [line for line in lines if line.startswith("== Job RESTARTING")]
        assert restarting, out[-3000:]
        assert "TaskExecutor" in restarting[0] or "task executor" in restarting[0], restarting
        attempts = {int(m["attempt"]) for m in _task_lines(out)}
        assert {0, 1} <= attempts, attempts
        retried = [int(m["text"].split()[1]) for m in _task_lines(out) if m["attempt"] != "0"
                   and m["text"].startswith("value ")]
        assert sorted(set(retried)) == list(range(60)), "the restarted attempt printed every value again"
        status = [line for line in lines if line.startswith("== ")]
        assert status.index(restarting[0]) < len(status) - 1 and status[-1].startswith("== Job FINISHED")


def test_a_jobs_log_expires_after_its_archive_entry(tmp_path: Path) -> None:
    """``jobstore.expiration-time``: the archive forgets the job, its log is still served (from its
    final status) until the retention pass deletes it; then the job is unknown (404)."""
    with session_cluster(tmp_path / "run", 1, "-D", "jobstore.expiration-time=2") as cluster:
        job_id = cluster.submit(JOB, "3")
        cluster.wait_state(job_id, "FINISHED")
        logs_dir = cluster.log_dir / "job-logs" / job_id
        assert (logs_dir / "_final").is_file()
        deadline = time.monotonic() + 60
        seen_after_archive = False
        while True:
            status, _, body = cluster.get(f"/jobs/{job_id}/logs")
            if status == 404:
                break
            assert status == 200, body[:300]
            page = json.loads(body)
            assert page["status"] == "FINISHED" and page["complete"]
            seen_after_archive |= cluster.get(f"/jobs/{job_id}")[0] == 404
            assert time.monotonic() < deadline, "the log was never deleted"
            time.sleep(0.5)
        assert seen_after_archive, "the log outlived the archive entry"
        assert not logs_dir.exists()
