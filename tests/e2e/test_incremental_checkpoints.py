"""A RocksDB job with incremental checkpoints, its TaskExecutors SIGKILLed mid-run: it restores
from incremental checkpoints and ends with every count exactly once; the shared files of
subsumed checkpoints are deleted, those the retained checkpoint refers to are kept."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.runtime.checkpoint.metadata import CheckpointMetadata, load_metadata
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage
from tests.e2e.conftest import (
    assert_exactly_once,
    read_output_lines,
    task_executor_processes,
    wait_committed_output,
    wait_running,
)
from tests.e2e.test_checkpointing import counting_job


def _read_checkpoints(job_dir: Path, seen: dict[int, CheckpointMetadata]) -> None:
    storage = FsspecCheckpointStorage()
    for chk in job_dir.glob("chk-*"):
        cid = int(chk.name.removeprefix("chk-"))
        if cid in seen or not (chk / "_metadata").is_file():
            continue
        try:
            seen[cid] = load_metadata(storage, str(chk))
        except Exception:  # subsumed and deleted while being read
            continue


def test_incremental_checkpoints_survive_killed_task_executors_and_clean_up_after_themselves(
    embedded: EmbeddedExecutor, tmp_path: Path
) -> None:
    out, chk = tmp_path / "out", tmp_path / "chk"
    n = 150_000
    env = counting_job(out, chk, n, parallelism=2, backend="rocksdb")
    env.configure({"execution.checkpointing.incremental": "true"})
    client = env.execute_async("incremental, killed twice")
    wait_running(client)
    job_dir = chk / str(client.get_job_id())
    seen: dict[int, CheckpointMetadata] = {}
    kills: list[int] = []
    done = threading.Event()

    def watch_and_kill() -> None:
        next_kill = time.monotonic() + 1.5
        while not done.is_set():
            _read_checkpoints(job_dir, seen)
            if len(kills) < 2 and time.monotonic() >= next_kill:
                victims = task_executor_processes()
                if victims and not client.get_job_status().result().is_globally_terminal_state():
                    victims[0].kill()
                    kills.append(victims[0].pid)
                next_kill = time.monotonic() + 1.5
            time.sleep(0.02)

    thread = threading.Thread(target=watch_and_kill)
    thread.start()
    try:
        client.get_job_execution_result().result(timeout=180)
    finally:
        done.set()
        thread.join()
    assert len(kills) == 2, "the job ended before it could be killed twice; make it longer"
    assert_exactly_once(out, n)

    _read_checkpoints(job_dir, seen)
    retained = sorted(
        int(p.name.removeprefix("chk-")) for p in job_dir.glob("chk-*") if (p / "_metadata").is_file()
    )
    assert len(retained) == 1  # num-retained 1: every older checkpoint was subsumed and deleted
    last = seen[retained[0]]
    assert any(op.incremental for op in last.operators), "the keyed state was checkpointed incrementally"
    kept = set(last.shared_files())
    assert kept and all((job_dir / p).is_file() for p in kept)
    subsumed_only = {p for cid, m in seen.items() if cid != retained[0] for p in m.shared_files()} - kept
    assert subsumed_only, "some table files were replaced between checkpoints (the test saw them go)"
    assert not any((job_dir / p).exists() for p in subsumed_only)
    reusing = [m for m in seen.values() if m.checkpointed_size() < m.state_size]
    assert reusing, "later checkpoints refer to table files earlier ones uploaded instead of uploading them"


def test_a_cancelled_jobs_incremental_checkpoint_restores_at_another_parallelism(
    embedded: EmbeddedExecutor, tmp_path: Path
) -> None:
    """The retained checkpoint of a cancelled job (incremental, RocksDB) starts a new job at
    parallelism 3: each new subtask reads its key groups out of the old subtasks' table files."""
    out, chk = tmp_path / "out", tmp_path / "chk"
    n = 120_000
    env = counting_job(out, chk, n, parallelism=2, backend="rocksdb")
    env.configure({"execution.checkpointing.incremental": "true"})
    first = env.execute_async("incremental p2")
    wait_committed_output(out)
    job_dir = chk / str(first.get_job_id())
    deadline = time.monotonic() + 30
    while not list(job_dir.glob("chk-*/_metadata")):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    first.cancel().result(timeout=60)
    (retained,) = [p.parent for p in job_dir.glob("chk-*/_metadata")]
    meta = load_metadata(FsspecCheckpointStorage(), str(retained))
    assert any(op.incremental for op in meta.operators)
    assert len(read_output_lines(out)) < n
    second = counting_job(out, chk, n, parallelism=3, savepoint=str(retained), backend="rocksdb")
    second.configure({"execution.checkpointing.incremental": "true"})
    second.execute("incremental p3")
    assert_exactly_once(out, n)
    assert all((job_dir / p).is_file() for p in meta.shared_files()), "the new job never deletes them"
