"""Real clusters for the artifact tests: an in-process JobManager (MiniCluster + REST) with TaskExecutor
processes, every blob directory under the test's tmp_path so the tests can watch them come and go."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.rest.conftest import RestCluster, make_config, no_leftover_processes, start_rest_cluster

__all__ = ["no_leftover_processes"]

REPO = Path(__file__).resolve().parents[2]


def flott(*args: str, timeout: float = 120, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """The ``flott`` CLI as a user runs it (a fresh process, working directory: the repository)."""
    return subprocess.run(
        [sys.executable, "-m", "flott.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


def job_dirs(blob_root: Path, job_id: str) -> list[Path]:
    """The per-job directories of ``job_id`` on every TaskExecutor and in the BlobServer."""
    return [
        *blob_root.glob(f"blobCache-*/jobs/job_{job_id}_*"),
        *blob_root.glob(f"blobStore-*/job_{job_id}"),
    ]


async def wait_until(condition: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def read_lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.fixture
def blob_root(tmp_path: Path) -> Path:
    return tmp_path / "blobs"


@pytest.fixture
async def clusters(no_leftover_processes: Any, blob_root: Path) -> AsyncIterator[Any]:
    """Start REST clusters with ``blob.storage.directory`` under tmp_path; all stopped afterwards."""
    started: list[RestCluster] = []

    async def start(num_task_managers: int = 1, slots: int = 2, **overrides: str) -> RestCluster:
        config = make_config(
            **{
                "taskmanager.numberOfTaskSlots": str(slots),
                "blob.storage.directory": str(blob_root),
                **overrides,
            }
        )
        cluster, endpoint = await start_rest_cluster(config, num_task_managers=num_task_managers)
        rc = RestCluster(cluster, endpoint, config, aiohttp.ClientSession())
        started.append(rc)
        return rc

    try:
        yield start
    finally:
        for rc in started:
            await rc.http.close()
            await rc.endpoint.stop()
            await rc.cluster.close()
