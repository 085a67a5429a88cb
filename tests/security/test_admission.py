"""Admission control on a real session cluster: what could take the JobManager down is refused at
submission with a 400 naming the limit, and the cluster keeps serving and running jobs."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import msgspec

from flott.runtime.jobgraph import new_id
from tests.rest.jobs import bounded_job, unbounded_job
from tests.security.conftest import (
    SessionCluster,
    start_session_cluster,
    stop_session_cluster,
    submit,
    with_parallelism,
)


def _error(body: object) -> str:
    assert isinstance(body, dict) and isinstance(body.get("errors"), list), body
    text = " ".join(body["errors"])
    assert "Traceback" not in text
    return text


def _still_serves(cluster: SessionCluster) -> None:
    """REST answers at once and a small job still runs to the end."""
    assert cluster.get("/overview", timeout=5)["taskmanagers"] == 2
    status, body = submit(cluster, bounded_job("after"))
    assert status == 202, body
    job_id = body["jobUrl"].rsplit("/", 1)[1]
    cluster.wait_job_state(job_id, "FINISHED")


def test_parallelism_above_flinks_bound_is_refused(session_cluster: SessionCluster) -> None:
    # The 3 KB request that used to make the JobManager build 10^7 subtasks on its event loop.
    huge = with_parallelism(bounded_job("huge"), 10**7)
    status, body = submit(session_cluster, huge)
    assert status == 400, body
    assert "max parallelism 10000000" in _error(body) and "32768" in _error(body)
    status, body = submit(session_cluster, with_parallelism(bounded_job("over"), 40_000, 40_000))
    assert status == 400 and "32768" in _error(body), body
    _still_serves(session_cluster)


def test_job_needing_more_slots_than_a_fixed_cluster_has_is_refused(
    session_cluster: SessionCluster,
) -> None:
    status, body = submit(session_cluster, with_parallelism(bounded_job("wide"), 5, 128))
    assert status == 400, body
    text = _error(body)
    assert "needs 5 task slots but this cluster has 2" in text, text
    assert "flott.admission.refuse-unschedulable" in text
    assert session_cluster.get("/jobs/overview")["jobs"] == []  # nothing was started
    _still_serves(session_cluster)


def test_too_many_vertices_are_refused(session_cluster: SessionCluster) -> None:
    graph = bounded_job("many")
    source = graph.vertices[0]
    vertices = [msgspec.structs.replace(source, id=new_id()) for _ in range(2000)]
    status, body = submit(session_cluster, msgspec.structs.replace(graph, vertices=vertices, edges=[]))
    assert status == 400, body
    assert "2000 vertices" in _error(body) and "flott.admission.max-vertices" in _error(body)
    _still_serves(session_cluster)


def test_cluster_wide_subtask_cap(tmp_path: Path) -> None:
    cluster = start_session_cluster(tmp_path, **{"flott.admission.max-subtasks": "3"})
    try:
        status, body = submit(cluster, unbounded_job("first", parallelism=1))
        assert status == 202, body
        first = body["jobUrl"].rsplit("/", 1)[1]
        status, body = submit(cluster, unbounded_job("second", parallelism=1))
        assert status == 400, body
        assert "2 are running" in _error(body) and "flott.admission.max-subtasks" in _error(body)
        assert cluster.job_state(first) in ("CREATED", "RUNNING")
        cluster.request("PATCH", f"/jobs/{first}?mode=cancel")
        cluster.wait_job_state(first, "CANCELED")
        status, body = submit(cluster, unbounded_job("third", parallelism=1))
        assert status == 202, body  # the cancelled job's subtasks no longer count
    finally:
        assert not stop_session_cluster(cluster)


def test_sigterm_ends_a_process_whose_event_loop_is_stuck(tmp_path: Path) -> None:
    """The shutdown watchdog: a loop that never comes back still lets SIGTERM end the process."""
    script = tmp_path / "stuck.py"
    script.write_text(
        textwrap.dedent("""
        import asyncio, sys, time
        from flott.runtime.entrypoint.termination import install_termination_handlers

        async def main():
            install_termination_handlers(asyncio.Event(), 1.0)
            print("ready", flush=True)
            time.sleep(120)  # the event loop is blocked: no callback runs

        asyncio.run(main())
    """)
    )
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 3, code  # EXIT_CODE_SHUTDOWN_TIMEOUT, long before the 120 s sleep ends
    assert proc.stderr is not None
    assert b"cluster.services.shutdown-timeout" in proc.stderr.read()


def test_sigterm_stops_the_jobmanager_with_a_running_job(tmp_path: Path) -> None:
    cluster = start_session_cluster(tmp_path)
    try:
        status, body = submit(cluster, unbounded_job("running", parallelism=1))
        assert status == 202, body
        cluster.wait_job_state(body["jobUrl"].rsplit("/", 1)[1], "RUNNING")
        time.sleep(0.5)
    finally:
        killed = stop_session_cluster(cluster)
    assert not killed, killed  # every process ended on SIGTERM, in order (exit code 0, not 3)
    assert cluster.jobmanager.returncode == 0, cluster.log()[-3000:]
