"""JobManager failover on a real ZooKeeper with real processes (``flott jobmanager start`` x2,
``flott taskmanager start`` x2, jobs submitted with ``flott run -m``).

The job (``counting_job.py``): numbers keyed by ``n % 7``, a running count per key, written by a
transactional FileSink, checkpointed every 200 ms; exactly once means every key's committed
updates are ``1..count`` each exactly once. ZooKeeper session timeout 3 s, so a SIGKILLed
leader's latch goes after ~3 s.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flott.errors import FencingTokenError, RpcConnectionError
from flott.runtime.gateways.dispatcher_gateway import DISPATCHER_ENDPOINT, DispatcherGateway
from flott.runtime.gateways.task_executor_gateway import TASK_EXECUTOR_ENDPOINT, TaskExecutorGateway
from flott.runtime.rpc.service import RpcService
from tests.highavailability.ha_cluster import (
    CLUSTER_ID,
    HaCluster,
    JobManager,
    all_tasks_running,
    checkpoint_stats,
    exactly_once_problems,
    http,
)
from tests.highavailability.zookeeper_server import ZooKeeperServer, find_classpath

SESSION_TIMEOUT_S = 3.0
LONG_N = 16000  # ~10 s of processing at 1 ms per record and parallelism 2
DELAY_MS = "1"


SHIPPED_UDF = """
import time


def pair(x):
    time.sleep(0.005)
    return (x % 7, 1)
"""

SHIPPED_JOB = """
import sys

import shipped_udf  # shipped with --pyFiles: the TaskExecutors get it from the BlobServer

from flott.common import Types
from flott.common.restart_strategy import RestartStrategies
from flott.common.serialization import Encoder
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.file_sink import FileSink
from flott.datastream.connectors.number_seq import NumberSequenceSource

out, checkpoints, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
env.enable_checkpointing(200)
env.get_checkpoint_config().set_checkpoint_storage_dir(checkpoints)
env.set_restart_strategy(RestartStrategies.fixed_delay_restart(50, 200))
env.configure({"taskmanager.network.batch-size": "50"})
(
    env.from_source(NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(), "numbers")
    .uid("numbers")
    .map(shipped_udf.pair, output_type=Types.TUPLE([Types.LONG(), Types.LONG()]))
    .uid("pairs")
    .key_by(lambda t: t[0])
    .reduce(lambda a, b: (a[0], a[1] + b[1]))
    .uid("counts")
    .sink_to(FileSink.for_row_format(out, Encoder.simple_string_encoder()).build())
    .uid("files")
)
env.execute("shipped")
"""


@pytest.fixture
def cluster(zookeeper: ZooKeeperServer, zk_root: str, tmp_path: Path) -> Iterator[HaCluster]:
    c = HaCluster(zookeeper.hosts, tmp_path / "cluster", zk_root, int(SESSION_TIMEOUT_S * 1000))
    try:
        yield c
    finally:
        c.close()


def wait_checkpoints(c: HaCluster, jm: JobManager, job_id: str, completed: int, timeout: float = 60) -> int:
    """Waits for ``completed`` checkpoints (counted by this leader); the latest completed id."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = checkpoint_stats(jm, job_id)
        if body and body["counts"]["completed"] >= completed:
            return int(body["latest"]["completed"]["id"])
        time.sleep(0.05)
    raise AssertionError(f"{completed} checkpoints not completed within {timeout}s\n{c.logs()}")


def wait_all_tasks_running(c: HaCluster, jm: JobManager, job_id: str, timeout: float = 60) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if all_tasks_running(c, jm, job_id):
            return time.monotonic() - start
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} not running on {jm.name} within {timeout}s\n{c.logs()}")


def fail_over(c: HaCluster, leader: JobManager, job_id: str) -> tuple[JobManager, int]:
    """SIGKILL ``leader`` once the job has checkpointed; the new leader, the checkpoint restored."""
    before = wait_checkpoints(c, leader, job_id, 2)
    c.kill(leader)
    killed = time.monotonic()
    new = c.wait_leader(30, other_than=leader)
    running = wait_all_tasks_running(c, new, job_id) + (time.monotonic() - killed)
    restored = checkpoint_stats(new, job_id)["latest"]["restored"]
    print(
        f"failover {leader.name} -> {new.name}: tasks running again after {running:.2f}s, restored {restored}"
    )
    assert restored is not None and restored["id"] >= before, (restored, before)
    return new, int(restored["id"])


def test_killed_leader_twice_job_continues_from_its_latest_checkpoint(
    cluster: HaCluster, tmp_path: Path
) -> None:
    c = cluster
    leader, standby = c.start_leader_and_standby()

    # a job that finishes before any failover
    done_out = tmp_path / "done"
    run = c.submit(leader, str(done_out), (tmp_path / "chk-done").as_uri(), "700")
    assert run.returncode == 0, run.stderr
    done_id = c.job_id_of(run)
    c.wait_state(leader, done_id, ("FINISHED",))
    assert exactly_once_problems(done_out, 700) == []
    done_files = sorted(p.name for p in done_out.rglob("*") if p.is_file())

    # the long job, submitted through the standby's REST endpoint
    out = tmp_path / "out"
    run = c.submit(standby, str(out), (tmp_path / "chk").as_uri(), str(LONG_N), DELAY_MS)
    assert run.returncode == 0, run.stderr
    job_id = c.job_id_of(run)
    assert c.job_state(leader, job_id) in ("RUNNING", "FINISHED")

    new_leader, restored = fail_over(c, leader, job_id)
    assert new_leader is standby

    # a client configured for HA and pointed at the dead leader follows ZooKeeper to the new one
    from flott.client.rest_cluster_client import SyncRestClusterClient
    from flott.configuration import Configuration

    client = SyncRestClusterClient(
        Configuration({**c.conf, "rest.retry.max-attempts": "3", "rest.retry.delay": "100 ms"}),
        address=leader.rest,
    )
    try:
        assert client.get_job_status(done_id) == "FINISHED"
        assert client.base_url == new_leader.url
    finally:
        client.close()

    # the finished job: still queryable with its result, not run again
    status, body = c.job(new_leader, done_id)
    assert status == 200 and body["state"] == "FINISHED", body
    status, result = http("GET", f"{new_leader.url}/jobs/{done_id}/execution-result")
    assert status == 200 and result["status"]["id"] == "COMPLETED", result

    # again, with a fresh standby
    third = c.start_jobmanager()
    deadline = time.monotonic() + 30
    while not c._rest_up(third):
        assert time.monotonic() < deadline, c.logs()
        time.sleep(0.1)
    final_leader, restored_again = fail_over(c, new_leader, job_id)
    assert final_leader is third
    assert restored_again > restored

    c.wait_state(final_leader, job_id, ("FINISHED", "FAILED", "CANCELED"), timeout=120)
    assert c.job_state(final_leader, job_id) == "FINISHED", c.logs()
    assert exactly_once_problems(out, LONG_N) == []

    assert c.job_state(final_leader, done_id) == "FINISHED"
    assert sorted(p.name for p in done_out.rglob("*") if p.is_file()) == done_files
    _, jobs = http("GET", f"{final_leader.url}/jobs/overview")
    assert sorted(j["state"] for j in jobs["jobs"]) == ["FINISHED", "FINISHED"], jobs


def test_submission_racing_the_failover_is_never_acknowledged_and_lost(
    cluster: HaCluster, tmp_path: Path
) -> None:
    c = cluster
    leader, standby = c.start_leader_and_standby()

    # acknowledged by the leader, which dies right after: the next leader runs it, with the
    # Python file the job shipped (--pyFiles), which has to survive the leader too
    udfs = tmp_path / "udfs"
    udfs.mkdir()
    (udfs / "shipped_udf.py").write_text(SHIPPED_UDF)
    (tmp_path / "shipped_job.py").write_text(SHIPPED_JOB)
    acked_out = tmp_path / "acked"
    run = c.submit(
        leader,
        str(acked_out),
        (tmp_path / "chk-acked").as_uri(),
        "400",
        script=tmp_path / "shipped_job.py",
        options=("--pyFiles", str(udfs / "shipped_udf.py")),
    )
    assert run.returncode == 0, run.stderr
    acked_id = c.job_id_of(run)
    blobs = tmp_path / "cluster" / "ha" / CLUSTER_ID.strip("/") / "blob" / f"job_{acked_id}"
    assert len(list(blobs.glob("blob_*"))) == 1, "the job's file is in the HA storage directory"

    results: dict[int, tuple[JobManager, Any]] = {}

    def submit(i: int, jm: JobManager) -> None:
        out = tmp_path / f"out-{i}"
        results[i] = (jm, c.submit(jm, str(out), (tmp_path / f"chk-{i}").as_uri(), "300", "0", "1"))

    # `flott run` needs ~2-3 s before it posts: these posts are spread around the kill
    threads = [threading.Thread(target=submit, args=(i, leader if i % 2 == 0 else standby)) for i in range(6)]
    for i, t in enumerate(threads):
        t.start()
        time.sleep(0.4)
        if i == 4:
            c.kill(leader)
    if leader.alive():
        c.kill(leader)
    for t in threads:
        t.join(180)
    new_leader = c.wait_leader(30, other_than=leader)

    c.wait_state(new_leader, acked_id, ("FINISHED", "FAILED", "CANCELED"), timeout=120)
    assert c.job_state(new_leader, acked_id) == "FINISHED"
    assert exactly_once_problems(acked_out, 400) == []
    # global cleanup: the job graph, its checkpoint pointers and its stored file are gone
    jobgraphs = f"{c.zk_root}{CLUSTER_ID}/jobgraphs"
    deadline = time.monotonic() + 20
    while blobs.exists() or acked_id in c.zk.get_children(jobgraphs):
        assert time.monotonic() < deadline, c.logs()
        time.sleep(0.1)
    assert not c.zk.exists(f"{c.zk_root}{CLUSTER_ID}/jobs/{acked_id}")

    acknowledged = []
    for i, (jm, run) in sorted(results.items()):
        if run.returncode == 0:
            acknowledged.append((i, c.job_id_of(run)))
        else:  # rejected: the client was told (after retrying), never silently lost
            assert "could not be submitted" in run.stdout + run.stderr, run.stdout + run.stderr
        print(f"submission {i} to {'leader' if jm is leader else 'standby'}: rc {run.returncode}")
    assert len(acknowledged) >= 3, "the submissions to the standby go through once it leads"
    for i, job_id in acknowledged:
        c.wait_state(new_leader, job_id, ("FINISHED", "FAILED", "CANCELED"), timeout=120)
        assert c.job_state(new_leader, job_id) == "FINISHED"
        assert exactly_once_problems(tmp_path / f"out-{i}", 300) == []


# -- cut off from ZooKeeper -------------------------------------------------------------------


@pytest.fixture
def private_zookeeper(tmp_path: Path) -> Iterator[ZooKeeperServer]:
    classpath = find_classpath()
    if classpath is None:
        pytest.skip("ZooKeeper is not installed")
    (tmp_path / "zk").mkdir()
    server = ZooKeeperServer(tmp_path / "zk", classpath)
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def _dispatcher_answers(address: str, token: str) -> bool | str:
    rpc = RpcService()
    try:
        gw = rpc.connect(address, DISPATCHER_ENDPOINT, DispatcherGateway, fencing_token=token, timeout=2.0)
        await gw.request_multiple_job_details()
        return True
    except (RpcConnectionError, FencingTokenError) as e:
        return f"{type(e).__name__}: {e}"
    finally:
        await rpc.stop()


async def _deposed_slot_request(dispatcher: str, token: str, old_session: str, job_id: str) -> list[str]:
    """A slot request of a JobMaster of the old leader session, sent to every TaskExecutor."""
    rpc = RpcService()
    try:
        gw = rpc.connect(dispatcher, DISPATCHER_ENDPOINT, DispatcherGateway, fencing_token=token)
        errors = []
        for te in await gw.request_task_executor_infos():
            te_gw = rpc.connect(te.rpc_address, TASK_EXECUTOR_ENDPOINT, TaskExecutorGateway)
            try:
                await te_gw.request_slot(
                    0, job_id, "f" * 32, dispatcher, f"jobmaster-{job_id}", f"{old_session}/deposed"
                )
                errors.append("accepted")
            except FencingTokenError as e:
                errors.append(f"FencingTokenError: {e}")
        return errors
    finally:
        await rpc.stop()


def test_leader_cut_off_from_zookeeper_stops_leading_and_is_fenced(
    private_zookeeper: ZooKeeperServer, zk_root: str, tmp_path: Path
) -> None:
    zk = private_zookeeper
    c = HaCluster(zk.hosts, tmp_path / "cluster", zk_root, int(SESSION_TIMEOUT_S * 1000))
    try:
        leader, _ = c.start_leader_and_standby()
        out = tmp_path / "out"
        run = c.submit(leader, str(out), (tmp_path / "chk").as_uri(), str(LONG_N), DELAY_MS)
        assert run.returncode == 0, run.stderr
        job_id = c.job_id_of(run)
        wait_checkpoints(c, leader, job_id, 2)
        info = c.leader_info("dispatcher")
        assert info is not None
        old_rpc, old_session = info
        assert asyncio.run(_dispatcher_answers(old_rpc, old_session)) is True
        c.zk.stop()  # the test's own client; the cluster's processes are the ones cut off
        c._zk = None

        zk.stop()
        cut = time.monotonic()
        while (answer := asyncio.run(_dispatcher_answers(old_rpc, old_session))) is True:
            assert time.monotonic() - cut < SESSION_TIMEOUT_S, "still leading after the session timeout"
            time.sleep(0.05)
        stopped_after = time.monotonic() - cut
        print(f"the leader stopped leading {stopped_after:.2f}s after ZooKeeper went away ({answer})")
        status, _ = http("GET", f"{leader.url}/jobs/overview")
        assert status == 503

        time.sleep(1.0)
        zk.start(port=zk.port)
        deadline = time.monotonic() + 60
        while (info := c.leader_info("dispatcher")) is None or info[1] == old_session:
            assert time.monotonic() < deadline, c.logs()
            time.sleep(0.1)
        new_rpc, new_session = info
        new_leader = c.wait_leader(30)
        wait_all_tasks_running(c, new_leader, job_id)

        # a deposed leader's JobMaster (a token of the old session) is refused by every TaskExecutor
        c.wait_ready(2)
        errors = asyncio.run(_deposed_slot_request(new_rpc, new_session, old_session, job_id))
        assert len(errors) == 2 and all(e.startswith("FencingTokenError") for e in errors), (errors, c.logs())

        c.wait_state(new_leader, job_id, ("FINISHED", "FAILED", "CANCELED"), timeout=120)
        assert c.job_state(new_leader, job_id) == "FINISHED", c.logs()
        assert exactly_once_problems(out, LONG_N) == []
    finally:
        c.close()
