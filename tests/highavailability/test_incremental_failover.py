"""A RocksDB job with incremental checkpoints loses its leading JobManager (SIGKILL): the new
leader restores the latest checkpoint, retains it and registers its shared files again, so once
its own checkpoints subsume it, the files only it used are deleted; the job ends exactly once."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flott.runtime.checkpoint.metadata import load_metadata
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage
from tests.highavailability.ha_cluster import HaCluster, checkpoint_stats, exactly_once_problems
from tests.highavailability.test_failover import DELAY_MS, LONG_N, SESSION_TIMEOUT_S, fail_over
from tests.highavailability.zookeeper_server import ZooKeeperServer

INCREMENTAL = ("-D", "state.backend.type=rocksdb", "-D", "execution.checkpointing.incremental=true")


@pytest.fixture
def cluster(zookeeper: ZooKeeperServer, zk_root: str, tmp_path: Path) -> Iterator[HaCluster]:
    c = HaCluster(zookeeper.hosts, tmp_path / "cluster", zk_root, int(SESSION_TIMEOUT_S * 1000))
    try:
        yield c
    finally:
        c.close()


def test_a_new_leader_rebuilds_the_shared_state_registry_and_cleans_up_the_restored_checkpoint(
    cluster: HaCluster, tmp_path: Path
) -> None:
    c = cluster
    leader, standby = c.start_leader_and_standby()
    out, chk = tmp_path / "out", tmp_path / "chk"
    run = c.submit(leader, str(out), chk.as_uri(), str(LONG_N), DELAY_MS, options=INCREMENTAL)
    assert run.returncode == 0, run.stderr
    job_id = c.job_id_of(run)
    job_dir = chk / job_id
    new_leader, restored_id = fail_over(c, leader, job_id)
    assert new_leader is standby
    storage = FsspecCheckpointStorage()
    restored = load_metadata(storage, str(job_dir / f"chk-{restored_id}"))
    assert any(op.incremental for op in restored.operators), "the keyed state was checkpointed incrementally"
    restored_files = set(restored.shared_files())
    # The new leader's own checkpoints subsume the restored one.
    deadline = time.monotonic() + 60
    while (job_dir / f"chk-{restored_id}").exists():
        assert time.monotonic() < deadline, c.logs()
        time.sleep(0.1)
    c.wait_state(new_leader, job_id, ("FINISHED", "FAILED", "CANCELED"), timeout=120)
    assert c.job_state(new_leader, job_id) == "FINISHED", c.logs()
    assert exactly_once_problems(out, LONG_N) == []

    retained = [p for p in job_dir.glob("chk-*") if (p / "_metadata").is_file()]
    assert len(retained) == 1, retained
    last = load_metadata(storage, str(retained[0]))
    kept = set(last.shared_files())
    assert kept and all((job_dir / p).is_file() for p in kept)
    assert restored_files - kept, "the restored tasks upload anew (they reuse nothing of another leader's)"
    assert not any((job_dir / p).exists() for p in restored_files - kept)
    stats = checkpoint_stats(new_leader, job_id)
    latest = stats["latest"]["completed"]
    assert latest["checkpointed_size"] <= latest["state_size"]
