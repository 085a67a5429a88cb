"""The JobMaster's checkpointing shell runs the coordinator's storage actions off its event loop.

A ``_metadata`` write (or a checkpoint directory deletion) on S3 takes as long as it takes; the
loop that serves heartbeats and acknowledgements must keep running meanwhile, a checkpoint counts
as completed only once its write ended, and a directory is never deleted before the write that
precedes it. No sockets, no processes: the TaskExecutor gateway is an in-process recorder and the
storage blocks until the test releases it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any

from flott.runtime.checkpoint.coordinator import CheckpointConfig
from flott.runtime.checkpoint.metadata import TaskStateSnapshot
from flott.runtime.checkpoint.storage import MemoryCheckpointStorage
from flott.runtime.jobmaster.checkpointing import CheckpointCoordinatorDriver
from flott.runtime.jobmaster.execution_graph import (
    ExecutionGraph,
    SlotAssigned,
    StartScheduling,
    TaskStateChanged,
)
from flott.runtime.messages.execution import ExecutionState
from tests.runtime.test_execution_graph import two_vertex_graph


class GatedStorage(MemoryCheckpointStorage):
    """Memory storage whose ``_metadata`` writes wait for the test (an S3 PUT that takes its time)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.log: list[str] = []
        self.loop_thread = threading.get_ident()
        self.io_threads: set[int] = set()

    def write_atomic(self, path: str, data: bytes) -> None:
        self.io_threads.add(threading.get_ident())
        assert self.gate.wait(30), "the test never released the write"
        self.log.append(f"write {path.rsplit('/', 2)[-2]}")
        super().write_atomic(path, data)

    def delete_dir(self, path: str) -> None:
        self.io_threads.add(threading.get_ident())
        self.log.append(f"delete {path.rsplit('/', 1)[-1]}")
        super().delete_dir(path)


class RecordingTaskExecutor:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int]] = []

    async def trigger_checkpoint(self, execution_id: str, checkpoint_id: int, *_: Any) -> None:
        self.calls.append(("trigger", execution_id, checkpoint_id))

    async def notify_checkpoint_complete(self, execution_id: str, checkpoint_id: int, final: bool) -> None:
        self.calls.append(("complete", execution_id, checkpoint_id))

    async def notify_checkpoint_aborted(self, execution_id: str, checkpoint_id: int) -> None:
        self.calls.append(("aborted", execution_id, checkpoint_id))


Driver = tuple[CheckpointCoordinatorDriver, ExecutionGraph, RecordingTaskExecutor]


async def running_driver(storage: GatedStorage) -> Driver:
    job_graph = two_vertex_graph(1, 1)
    eg = ExecutionGraph(job_graph)
    eg.handle(StartScheduling(), 1)
    eg.handle(SlotAssigned(0, "te-0", "alloc-0"), 2)
    te = RecordingTaskExecutor()
    tasks: set[asyncio.Task[None]] = set()

    def spawn(coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def fail_job(error: Exception) -> None:
        raise AssertionError(f"the job must not fail: {error}")

    driver = CheckpointCoordinatorDriver(
        job_graph, lambda: eg, CheckpointConfig(checkpoints_dir="/chk", num_retained=1), storage,
        lambda rid: te if rid == "te-0" else None,  # type: ignore[arg-type,return-value]
        spawn, fail_job,
    )  # fmt: skip
    for eid in eg.executions:
        eg.handle(TaskStateChanged(eid, ExecutionState.RUNNING), 4)
    driver.on_graph_changed()
    return driver, eg, te


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


def test_the_metadata_write_runs_off_the_loop_and_completion_waits_for_it() -> None:
    async def main() -> None:
        storage = GatedStorage()
        driver, eg, te = await running_driver(storage)
        request = asyncio.get_running_loop().create_task(driver.trigger_checkpoint())
        await settle()
        assert [c[0] for c in te.calls] == ["trigger"]
        for eid in eg.executions:
            driver.acknowledge(eid, 1, TaskStateSnapshot())
        # The write is blocked in the worker thread; the loop keeps running (this very await
        # returns) and the checkpoint is not completed: no task was told, the request waits.
        for _ in range(5):
            await asyncio.sleep(0.01)
        assert not request.done() and 1 in driver.coordinator.pending
        assert not any(c[0] == "complete" for c in te.calls)
        storage.gate.set()
        assert await asyncio.wait_for(request, 30) == 1
        await settle()
        assert storage.exists("/chk/" + eg.job_graph.job_id + "/chk-1/_metadata")
        assert sorted(c[0] for c in te.calls if c[0] == "complete") == ["complete", "complete"]
        assert storage.io_threads and storage.loop_thread not in storage.io_threads
        driver.shutdown("test over")

    asyncio.run(main())


def test_storage_actions_run_in_the_order_they_were_emitted() -> None:
    """With one retained checkpoint, completing the second discards the first: after its write."""

    async def main() -> None:
        storage = GatedStorage()
        storage.gate.set()
        driver, eg, _ = await running_driver(storage)
        for expected in (1, 2):
            request = asyncio.get_running_loop().create_task(driver.trigger_checkpoint())
            await settle()
            for eid in eg.executions:
                driver.acknowledge(eid, expected, TaskStateSnapshot())
            assert await asyncio.wait_for(request, 30) == expected
        for _ in range(200):  # the discard is queued behind the second write; wait for it
            if len(storage.log) == 3:
                break
            await asyncio.sleep(0.01)
        assert storage.log == ["write chk-1", "write chk-2", "delete chk-1"]
        driver.shutdown("test over")

    asyncio.run(main())
