"""A TaskExecutor paused (SIGSTOP) longer than the heartbeat timeout comes back after SIGCONT: the
ResourceManager and the JobMaster wrote it off, so it drops the tasks they replaced and registers
again (Flink's registration loop), and the job runs on it again."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import msgspec

from tests.rest.jobs import unbounded_job
from tests.security.conftest import start_session_cluster, stop_session_cluster, submit

RESTARTS = {
    "restart-strategy.type": "fixed-delay",
    "restart-strategy.fixed-delay.attempts": "1000",
    "restart-strategy.fixed-delay.delay": "500 ms",
}


def test_paused_task_executor_reconnects_and_the_job_runs_again(tmp_path: Path) -> None:
    cluster = start_session_cluster(tmp_path, task_managers=1)  # the job can only come back on it
    try:
        graph = unbounded_job("survivor", parallelism=1)
        graph = msgspec.structs.replace(graph, config={**graph.config, **RESTARTS})
        status, body = submit(cluster, graph)
        assert status == 202, body
        job_id = body["jobUrl"].rsplit("/", 1)[1]
        cluster.wait_all_tasks_running(job_id)
        [worker] = cluster.task_executor_processes()
        [before] = cluster.get("/taskmanagers")["taskmanagers"]

        worker.send_signal(signal.SIGSTOP)
        try:
            # heartbeat.timeout is 3 s: the ResourceManager and the JobMaster write it off.
            cluster.wait_for(
                "the paused TaskManager written off",
                lambda: cluster.get("/overview")["taskmanagers"] == 0,
                timeout=30,
            )

            def replaced() -> bool:
                job = cluster.get(f"/jobs/{job_id}")
                return job["state"] != "RUNNING" or any(v["status"] != "RUNNING" for v in job["vertices"])

            cluster.wait_for("the job waiting for slots", replaced)
            time.sleep(2.0)  # paused well past the timeout
        finally:
            worker.send_signal(signal.SIGCONT)

        cluster.wait_task_managers(1, timeout=60)
        [after] = cluster.get("/taskmanagers")["taskmanagers"]
        assert after["id"] == before["id"]  # the same process came back, not a replacement
        assert worker.is_running() and worker.status() != "stopped"
        cluster.wait_all_tasks_running(job_id, timeout=90)
        assert cluster.get("/overview")["slots-available"] == 0  # one attempt holds the one slot
    finally:
        assert not stop_session_cluster(cluster)
