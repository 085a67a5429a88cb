"""The job log's store, writer and pages, and a TaskExecutor's task output buffer, on their own
(a local directory; no process, no socket)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from flott.configuration import Configuration
from flott.errors import JobNotFoundError
from flott.runtime.jobgraph import JobVertex
from flott.runtime.jobmaster.job_log import JobLogStore, JobLogWriter, job_logs_root, read_page
from flott.runtime.messages.execution import TaskDeploymentDescriptor
from flott.runtime.messages.task_output import OutputStream, TaskOutputBatch
from flott.runtime.taskexecutor import task_output
from flott.runtime.taskexecutor.task_output import TaskOutputBuffer

JOB = "0123456789abcdef0123456789abcdef"


def _batch(texts: list[str], attempt: int = 0, dropped: int = 0) -> TaskOutputBatch:
    lines: list[tuple[int, OutputStream, str]] = [(1000 + i, "stdout", t) for i, t in enumerate(texts)]
    return TaskOutputBatch("e1", "Map", 1, 2, attempt, lines, dropped)


def _all(store: JobLogStore, writer: JobLogWriter | None = None, status: str = "RUNNING") -> list[str]:
    page = read_page(store, JOB, 0, 10_000, status, writer.flushed if writer is not None else None)
    return [line.text for line in page.lines]


def test_written_lines_are_paged_and_a_new_writer_continues_after_them(tmp_path: Path) -> None:
    async def run() -> None:
        store = JobLogStore(str(tmp_path))
        writer = JobLogWriter.open(store, JOB, 1 << 20)
        writer.append_status("RUNNING", "Job RUNNING")
        writer.append_task_output(_batch(["a", "b"]))
        assert _all(store, writer) == [], "lines are served once written: an index means one line"
        await writer.flush()
        writer.append_task_output(_batch(["c"]))
        assert _all(store, writer) == ["Job RUNNING", "a", "b"]
        await writer.flush()
        assert _all(store, writer) == ["Job RUNNING", "a", "b", "c"]
        page = read_page(store, JOB, 2, 1, "RUNNING", writer.flushed)
        assert (page.start, page.next, [x.text for x in page.lines]) == (2, 3, ["b"])
        assert read_page(store, JOB, 3, 5, "RUNNING", writer.flushed).lines[0].task == "Map (2/2)"
        tail = read_page(store, JOB, -2, 10, "RUNNING", writer.flushed)
        assert (tail.start, [x.text for x in tail.lines]) == (2, ["b", "c"])
        assert not tail.complete, "a running job's log is never complete"
        writer.append_status("FINISHED", "Job FINISHED")
        await writer.close("FINISHED")
        done = read_page(store, JOB, 0, 10, "FINISHED")
        assert done.complete and done.next == 5 and done.lines[-1].status == "FINISHED"
        assert not read_page(store, JOB, 0, 2, "FINISHED").complete, "more lines follow that page"
        forgotten = read_page(store, JOB, 0, 10, None)
        assert forgotten.status == "FINISHED" and forgotten.complete, "the final status is in the log"

        lost = JobLogWriter.open(store, JOB, 1 << 20)  # a leader that dies before writing
        lost.append_status("RUNNING", "never written")
        again = JobLogWriter.open(store, JOB, 1 << 20)  # the next leader (or a rescale) continues
        assert again.next_index == 5 and store.stored(JOB).final is None  # type: ignore[union-attr]
        again.append_status("RUNNING", "Job RUNNING again")
        await again.flush()
        assert _all(store)[-2:] == ["Job FINISHED", "Job RUNNING again"]

    asyncio.run(run())


def test_the_log_keeps_a_bounded_amount_of_task_output_and_says_so(tmp_path: Path) -> None:
    async def run() -> None:
        store = JobLogStore(str(tmp_path))
        writer = JobLogWriter.open(store, JOB, 2000)
        assert writer.append_task_output(_batch(["x" * 100] * 5))
        assert not writer.append_task_output(_batch(["y" * 100] * 50, dropped=3)), "the sender may stop"
        writer.append_status("FINISHED", "Job FINISHED")
        await writer.close("FINISHED")
        page = read_page(store, JOB, 0, 1000, "FINISHED")
        kinds = [line.kind for line in page.lines]
        assert kinds.count("truncated") == 1 and kinds[-1] == "status" and page.truncated
        assert sum(len(line.text) for line in page.lines if line.kind == "stdout") < 2000
        assert "lines of task output were not kept" in page.lines[-1].text

    asyncio.run(run())


def test_unknown_jobs_and_hostile_ids_are_not_found(tmp_path: Path) -> None:
    store = JobLogStore(str(tmp_path))
    with pytest.raises(JobNotFoundError):
        read_page(store, JOB, 0, 10, None)
    for bad in ("../etc", "..", "A" * 32, JOB + "/x", ""):
        with pytest.raises(JobNotFoundError):
            store.stored(bad)
    assert read_page(store, JOB, 0, 10, "INITIALIZING").lines == [], "a known job without a log yet"

    async def orphan() -> None:  # its JobManager stopped under it, and nobody recovered it
        writer = JobLogWriter.open(store, JOB, 1 << 20)
        writer.append_task_output(_batch(["last words"]))
        await writer.flush()

    asyncio.run(orphan())
    page = read_page(store, JOB, 0, 10, None)
    assert (page.status, page.complete, [x.text for x in page.lines]) == ("UNKNOWN", True, ["last words"])
    assert not read_page(store, JOB, 0, 10, "RUNNING").complete, "known and running: more may come"


def test_retention_deletes_only_unknown_jobs_past_the_expiration_time(tmp_path: Path) -> None:
    async def run() -> None:
        store = JobLogStore(str(tmp_path))
        other = "f" * 32
        for job in (JOB, other):
            writer = JobLogWriter.open(store, job, 1 << 20)
            writer.append_task_output(_batch(["a"]))
            await writer.close("FINISHED")
        final_ms = store.stored(JOB).final.timestamp  # type: ignore[union-attr]
        assert store.prune(lambda j: False, 60, now_ms=final_ms + 59_000) == []
        assert store.prune(lambda j: j == JOB, 60, now_ms=final_ms + 61_000) == [other]
        assert store.job_ids() == [JOB]

    asyncio.run(run())


def test_roots_follow_the_configuration(tmp_path: Path) -> None:
    assert job_logs_root(Configuration({"flott.job-logs.dir": "none"})) is None
    assert job_logs_root(Configuration({"flott.job-logs.dir": "s3://b/logs/"})) == "s3://b/logs"
    ha = Configuration({
        "high-availability.type": "zookeeper", "high-availability.storageDir": "file:///ha/",
        "high-availability.cluster-id": "/c1",
    })
    assert job_logs_root(ha) == "file:///ha/c1/job-logs"
    assert job_logs_root(Configuration({"log.file": str(tmp_path / "x.log")})) == str(tmp_path / "job-logs")


def _tdd() -> TaskDeploymentDescriptor:
    vertex = JobVertex(id="v" * 32, name="Map", parallelism=3, max_parallelism=128, operators=[])
    return TaskDeploymentDescriptor(
        job_id=JOB, job_name="j", execution_id="e1", allocation_id="a", vertex=vertex,
        subtask_index=2, attempt_number=1, job_config={}, input_gates=[], output_partitions=[], artifacts={},
    )


def test_the_buffer_ships_whole_lines_as_runs_and_bounds_what_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = TaskOutputBuffer(_tdd())
    buffer.write("stdout", "hel")
    buffer.write("stdout", "lo\nwor")
    buffer.write("stderr", "oops\n")
    batch = buffer.drain()
    assert batch is not None
    assert [(s, t) for _, s, t in batch.runs] == [("stdout", "hello"), ("stderr", "oops")]
    assert (batch.vertex_name, batch.subtask_index, batch.parallelism, batch.attempt) == ("Map", 2, 3, 1)
    assert buffer.drain() is None, "the unfinished line waits"
    buffer.write("stdout", "ld\nmore\nand")
    again = buffer.drain()
    assert again is not None and [t for _, _, t in again.runs] == ["world\nmore"]
    final = buffer.drain(final=True)
    assert final is not None and [t for _, _, t in final.runs] == ["and"]

    buffer.write("stdout", "z" * (task_output.MAX_LINE_CHARS + 10))
    endless = buffer.drain()
    assert endless is not None and len(endless.runs[0][2]) == task_output.MAX_LINE_CHARS + 10

    monkeypatch.setattr(task_output, "MAX_PENDING_BYTES", 10)
    for text in ("12345\n", "67890\n", "abcde\n"):
        buffer.write("stdout", text)
    bounded = buffer.drain()
    assert bounded is not None and bounded.dropped == 1
    assert [t for _, _, t in bounded.runs] == ["12345\n67890"]
    buffer.enabled = False
    buffer.write("stdout", "ignored\n")
    assert buffer.drain(final=True) is None


def test_the_log_splits_runs_into_lines_and_cuts_endless_ones(tmp_path: Path) -> None:
    store = JobLogStore(str(tmp_path))
    writer = JobLogWriter.open(store, JOB, 1 << 20)
    writer.append_task_output(_batch(["a\nb\r\nc", "x" * 20_000]))
    asyncio.run(writer.flush())
    texts = [line.text for line in read_page(store, JOB, 0, 10, "RUNNING", writer.flushed).lines]
    assert texts[:3] == ["a", "b", "c"] and texts[3].endswith("[... line cut]") and len(texts) == 4


def test_any_fsspec_filesystem_holds_job_logs() -> None:
    """No appends, no local paths: chunks written whole and renamed work on fsspec's memory
    filesystem as on object stores."""
    import uuid

    store = JobLogStore(f"memory://flott-job-logs-{uuid.uuid4().hex}")

    async def run() -> None:
        writer = JobLogWriter.open(store, JOB, 1 << 20)
        writer.append_task_output(_batch(["one", "two"]))
        await writer.flush()
        writer.append_task_output(_batch(["three"]))
        await writer.close("FINISHED")

    asyncio.run(run())
    page = read_page(store, JOB, 0, 10, None)
    assert [x.text for x in page.lines] == ["one", "two", "three"] and page.complete
    stored = store.stored(JOB)
    assert stored is not None and stored.chunks == [0, 2] and stored.size > 0
    store.delete(JOB)
    assert store.stored(JOB) is None
