"""A job's own log: its tasks' output and its status changes, kept after the job ended.

Flink keeps a task's stdout in its TaskManager's ``.out`` file: gone with the TaskManager, mixed
with every other job's, and without a word about restarts. flott keeps, per job, one log that
outlives the TaskExecutors and the JobManager:

* each TaskExecutor tags what a task writes to stdout/stderr with the task's name, subtask and
  attempt and ships it to the job's JobMaster
  (:mod:`flott.runtime.taskexecutor.task_output`), before the task's final state;
* the JobMaster's :class:`JobLogWriter` appends those lines and a line per status change of the
  job (RUNNING, RESTARTING with its cause, the final status) and writes them, about twice a
  second, as *chunks* to ``<root>/<job id>/``: each chunk a file of JSON lines named by the index
  of its first line, written whole under a temporary name and then renamed, so a reader never
  sees half a chunk and any fsspec filesystem works (no appends: s3 has none);
* the job's last chunk, then ``_final`` (its final status), are written before the JobMaster
  reports the job terminal: once the Dispatcher knows a job ended, its log is complete;
* a JobMaster started for a job whose log exists (a new leader recovering it, a rescale)
  continues it after its last line.

The root is ``flott.job-logs.dir``, else ``<high-availability.storageDir>/<cluster-id>/job-logs``
with ZooKeeper HA (every JobManager reaches it, so a new leader serves the logs of jobs that
ended before the failover), else ``job-logs`` next to the process's log file (``log.file``'s
directory, else ``env.log.dir``); ``none`` keeps no job logs (the embedded cluster's default).
A job's log keeps at most ``flott.job-logs.max-bytes`` of task output; beyond, one ``truncated``
line says so and only status lines follow. A log is deleted once its job is neither running nor
archived and its last line is older than ``jobstore.expiration-time`` (:meth:`JobLogStore.prune`).

What can be lost: lines a TaskExecutor had not shipped when it was killed (at most the last
~0.2 s of output), and lines a JobMaster had not written when its JobManager was killed (at
most the last ~0.5 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import fsspec
import msgspec

from flott.configuration import Configuration
from flott.errors import JobNotFoundError
from flott.runtime.entrypoint.runtime_logging import LOG_FILE, log_dir
from flott.runtime.messages.task_output import JobLogLine, JobLogPage, OutputStream, TaskOutputBatch

log = logging.getLogger(__name__)

JOB_LOGS_DIR = "flott.job-logs.dir"
JOB_LOGS_MAX_BYTES = "flott.job-logs.max-bytes"
FLUSH_INTERVAL_S = 0.5
MAX_PAGE_BYTES = 1024 * 1024
"""A page answered over REST carries at most this much text (and at least one line)."""
TERMINAL = frozenset({"FINISHED", "FAILED", "CANCELED"})

_HEX32 = re.compile(r"^[0-9a-f]{32}$")
_CHUNK = re.compile(r"^(\d{12})\.jsonl$")
_FINAL = "_final"
_ENCODER = msgspec.json.Encoder()
_LINE_DECODER = msgspec.json.Decoder(JobLogLine)


class _Final(msgspec.Struct, frozen=True):
    status: str
    timestamp: int


OFF = "none"
"""``flott.job-logs.dir: none``: jobs keep no log (the embedded cluster's default: its jobs'
output is on the console of the program that runs them)."""


def job_logs_root(config: Configuration) -> str | None:
    """Where job logs go (see the module docstring); None if they are off."""
    explicit = config.get(JOB_LOGS_DIR, "").strip()
    if explicit.lower() == OFF:
        return None
    if explicit:
        return explicit.rstrip("/")
    if config.get("high-availability.type", "none").strip().lower() == "zookeeper":
        storage = config.get("high-availability.storageDir", "").strip().rstrip("/")
        if storage:
            cluster = config.get("high-availability.cluster-id", "/default").strip("/") or "default"
            return f"{storage}/{cluster}/job-logs"
    if config.contains(LOG_FILE) and config.get(LOG_FILE).strip():  # next to the process's log
        return str(Path(config.get(LOG_FILE).strip()).expanduser().parent / "job-logs")
    return str(log_dir(config) / "job-logs")


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class _StoredLog:
    chunks: list[int]
    """The first line index of each chunk, ascending."""
    total: int
    size: int
    final: _Final | None
    last_timestamp: int


class JobLogStore:
    """Every job's log under one root (synchronous file I/O: callers use a worker thread)."""

    def __init__(self, root: str) -> None:
        self.root = root.rstrip("/")
        self.fs, self._base = fsspec.core.url_to_fs(self.root)

    def _dir(self, job_id: str) -> str:
        if not _HEX32.match(job_id):
            raise JobNotFoundError(f"{job_id!r} is not a job id")
        return f"{self._base}/{job_id}"

    def _names(self, job_id: str) -> dict[str, int] | None:
        """The job's files and their sizes (one listing)."""
        try:
            listed = self.fs.ls(self._dir(job_id), detail=True)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return {str(e["name"]).rstrip("/").rsplit("/", 1)[-1]: int(e.get("size") or 0) for e in listed}

    def _read_chunk(self, job_id: str, start: int) -> list[bytes]:
        with self.fs.open(f"{self._dir(job_id)}/{start:012d}.jsonl", "rb") as f:
            data: bytes = f.read()
        return [line for line in data.split(b"\n") if line]

    def stored(self, job_id: str) -> _StoredLog | None:
        """The shape of the job's log, None if it has none."""
        names = self._names(job_id)
        if names is None:
            return None
        chunks = sorted(int(m.group(1)) for n in names if (m := _CHUNK.match(n)))
        total, size, last_ts = 0, 0, 0
        if chunks:
            last = self._read_chunk(job_id, chunks[-1])
            total = chunks[-1] + len(last)
            if last:
                with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                    last_ts = _LINE_DECODER.decode(last[-1]).timestamp
            size = sum(names.get(f"{s:012d}.jsonl", 0) for s in chunks)
        final = None
        if _FINAL in names:
            with contextlib.suppress(OSError, msgspec.DecodeError, msgspec.ValidationError):
                with self.fs.open(f"{self._dir(job_id)}/{_FINAL}", "rb") as f:
                    final = msgspec.json.decode(f.read(), type=_Final)
        return _StoredLog(chunks, total, size, final, last_ts)

    def read(
        self, job_id: str, start: int, max_lines: int, limit: int | None = None
    ) -> tuple[list[JobLogLine], _StoredLog | None]:
        """Lines from ``start`` (before ``limit``, if given), at most ``max_lines`` and about
        :data:`MAX_PAGE_BYTES`; and the log's shape."""
        stored = self.stored(job_id)
        if stored is None:
            return [], None
        end = stored.total if limit is None else min(limit, stored.total)
        out: list[JobLogLine] = []
        budget = MAX_PAGE_BYTES
        first = max((i for i, s in enumerate(stored.chunks) if s <= start), default=0)
        for chunk_start in stored.chunks[first:]:
            if chunk_start >= end or len(out) >= max_lines or budget <= 0:
                break
            for i, raw in enumerate(self._read_chunk(job_id, chunk_start)):
                index = chunk_start + i
                if index < start:
                    continue
                if index >= end or len(out) >= max_lines or (budget <= 0 and out):
                    break
                try:
                    out.append(_LINE_DECODER.decode(raw))
                except (msgspec.DecodeError, msgspec.ValidationError):
                    out.append(JobLogLine(0, "stderr", "[unreadable log line]"))
                budget -= len(raw)
        return out, stored

    def write_chunk(self, job_id: str, start: int, lines: Iterable[JobLogLine]) -> int:
        """Write one chunk whole (temporary name, then renamed); its size in bytes."""
        data = b"".join(_ENCODER.encode(line) + b"\n" for line in lines)
        self._write(job_id, f"{start:012d}.jsonl", data)
        return len(data)

    def write_final(self, job_id: str, status: str) -> None:
        self._write(job_id, _FINAL, msgspec.json.encode(_Final(status, _now_ms())))

    def clear_final(self, job_id: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm(f"{self._dir(job_id)}/{_FINAL}")

    def _write(self, job_id: str, name: str, data: bytes) -> None:
        directory = self._dir(job_id)
        self.fs.makedirs(directory, exist_ok=True)
        tmp = f"{directory}/.{name}.inprogress-{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}"
        with self.fs.open(tmp, "wb") as f:
            f.write(data)
        self.fs.mv(tmp, f"{directory}/{name}")

    def delete(self, job_id: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm(self._dir(job_id), recursive=True)

    def job_ids(self) -> list[str]:
        try:
            listed = self.fs.ls(self._base, detail=False)
        except (FileNotFoundError, NotADirectoryError):
            return []
        names = [str(n).rstrip("/").rsplit("/", 1)[-1] for n in listed]
        return [n for n in names if _HEX32.match(n)]

    def prune(self, keep: Callable[[str], bool], ttl_s: float, now_ms: int | None = None) -> list[str]:
        """Delete the logs of jobs ``keep`` does not name whose last line (or final status) is
        older than ``ttl_s``; the ids deleted."""
        now = _now_ms() if now_ms is None else now_ms
        deleted = []
        for job_id in self.job_ids():
            if keep(job_id):
                continue
            try:
                stored = self.stored(job_id)
            except OSError as e:
                log.debug("job log %s unreadable: %r", job_id, e)
                continue
            if stored is None:
                continue
            last = max(stored.last_timestamp, stored.final.timestamp if stored.final else 0)
            if now - last > ttl_s * 1000:
                self.delete(job_id)
                deleted.append(job_id)
        return deleted


MAX_LINE_CHARS = 16 * 1024
"""A longer line is cut (and says so)."""


def _lines(batch: TaskOutputBatch) -> Iterable[tuple[int, OutputStream, str]]:
    for timestamp, stream, run in batch.runs:
        for line in run.split("\n"):
            if len(line) > MAX_LINE_CHARS:
                line = line[:MAX_LINE_CHARS] + " [... line cut]"
            yield timestamp, stream, line.removesuffix("\r")


def _task_name(batch: TaskOutputBatch) -> str:
    return f"{batch.vertex_name} ({batch.subtask_index + 1}/{batch.parallelism})"


class JobLogWriter:
    """One JobMaster's appends to its job's log (on the event loop; file I/O in worker threads).

    Lines get their index when appended and are served once written (:func:`read_page`).
    """

    def __init__(self, store: JobLogStore, job_id: str, max_bytes: int) -> None:
        self.store = store
        self.job_id = job_id
        self.max_bytes = max_bytes
        self.flushed = 0
        """Lines ``0 .. flushed - 1`` are in storage."""
        self._pending: list[JobLogLine] = []
        self._bytes = 0
        self._truncated = False
        self._dropped = 0
        self._closed = False
        self._flush_lock = asyncio.Lock()

    @classmethod
    def open(cls, store: JobLogStore, job_id: str, max_bytes: int) -> JobLogWriter:
        """A writer continuing the job's log after its last stored line (synchronous I/O)."""
        writer = cls(store, job_id, max_bytes)
        stored = store.stored(job_id)
        if stored is not None:
            writer.flushed = stored.total
            writer._bytes = stored.size
            writer._truncated = stored.size >= max_bytes
            if stored.final is not None:
                store.clear_final(job_id)  # the job runs again (recovered, rescaled)
        return writer

    @property
    def next_index(self) -> int:
        return self.flushed + len(self._pending)

    @property
    def closed(self) -> bool:
        return self._closed

    def _add(self, line: JobLogLine, size: int) -> None:
        self._pending.append(line)
        self._bytes += size

    def append_task_output(self, batch: TaskOutputBatch) -> bool:
        """The task's lines; False once the log keeps no more task output (the sender may stop)."""
        if self._closed:
            return False
        task = _task_name(batch)
        self._dropped += batch.dropped
        for timestamp, stream, text in _lines(batch):
            size = len(text) + len(task) + 80
            if self._truncated:
                self._dropped += 1
                continue
            if self._bytes + size > self.max_bytes:
                self._truncated = True
                self._dropped += 1
                self._add(
                    JobLogLine(
                        _now_ms(), "truncated",
                        f"[the log keeps no more task output: {self.max_bytes} bytes reached "
                        f"({JOB_LOGS_MAX_BYTES})]",
                    ),
                    120,
                )
                continue
            self._add(
                JobLogLine(
                    timestamp, stream, text, task=task, subtask=batch.subtask_index, attempt=batch.attempt
                ),
                size,
            )
        return not self._truncated

    def append_status(self, status: str, text: str) -> None:
        """A status change of the job (kept even after truncation, within twice the bound)."""
        if self._closed or self._bytes > 2 * self.max_bytes:
            return
        if status in TERMINAL and self._dropped:
            text += f" ({self._dropped} lines of task output were not kept)"
        self._add(JobLogLine(_now_ms(), "status", text, status=status), len(text) + 80)

    async def flush(self) -> None:
        async with self._flush_lock:
            if not self._pending:
                return
            lines = list(self._pending)
            start = self.flushed
            try:
                await asyncio.to_thread(self.store.write_chunk, self.job_id, start, lines)
            except Exception as e:  # storage unreachable: keep the lines and try again
                log.warning("job %s: writing its log to %s failed: %r", self.job_id, self.store.root, e)
                return
            del self._pending[: len(lines)]
            self.flushed = start + len(lines)

    async def run(self) -> None:
        """Write what was appended, every :data:`FLUSH_INTERVAL_S`, until closed or cancelled."""
        while not self._closed:
            await asyncio.sleep(FLUSH_INTERVAL_S)
            await self.flush()

    async def close(self, final_status: str) -> None:
        """The job is terminal: write the rest and the final status; nothing is appended after."""
        if self._closed:
            return
        await self.flush()
        self._closed = True
        try:
            await asyncio.to_thread(self.store.write_final, self.job_id, final_status)
        except Exception as e:
            log.warning("job %s: writing its final status to its log failed: %r", self.job_id, e)

    def abandon(self) -> None:
        """Leadership lost: write nothing more (the next leader's JobMaster continues the log)."""
        self._closed = True
        self._pending.clear()


def read_page(
    store: JobLogStore,
    job_id: str,
    start: int,
    max_lines: int,
    status: str | None,
    written: int | None = None,
) -> JobLogPage:
    """A page of the job's log (synchronous I/O: run in a worker thread).

    Only lines in storage are served: a line's index then means the same line to every reader,
    whichever JobManager answers (lines a JobMaster holds are lost if its JobManager dies, and the
    next leader's JobMaster continues after the stored ones: serving them would give one index
    two lines). ``status``: the job's status as the Dispatcher knows it (None: unknown there; then
    its log must exist, else :class:`JobNotFoundError`). ``written``: a running JobMaster's
    :attr:`JobLogWriter.flushed`, the end of its log for now. A negative ``start`` counts from the
    end. A page is complete when nothing follows it and nothing will: the job is terminal, or no
    longer known here.
    """
    stored = store.stored(job_id)
    if stored is None and status is None and written is None:
        raise JobNotFoundError(f"Job {job_id} not found")
    total = stored.total if stored is not None else 0
    if written is not None:
        total = min(total, written)
    if start < 0:
        start = max(0, total + start)
    start = min(start, total)
    lines: list[JobLogLine] = []
    if stored is not None and start < total:
        lines, stored = store.read(job_id, start, max_lines, total)
    final = stored.final.status if stored is not None and stored.final is not None else None
    shown = status or final or "UNKNOWN"
    nxt = start + len(lines)
    # A job the Dispatcher does not know whose log has no final status ran under a JobManager that
    # stopped (or died) under it and did not recover it: nothing more will come either.
    complete = written is None and (shown in TERMINAL or status is None) and nxt >= total
    truncated = any(line.kind == "truncated" for line in lines)
    return JobLogPage(job_id, start, nxt, lines, shown, complete, truncated)


class JobLogs:
    """The Dispatcher's job logs: writers for the jobs it runs, pages for REST, retention."""

    def __init__(self, config: Configuration) -> None:
        root = job_logs_root(config)
        self.store = JobLogStore(root) if root is not None else None
        self.max_bytes = config.get_int(JOB_LOGS_MAX_BYTES)
        self.ttl_s = float(config.get_int("jobstore.expiration-time"))

    async def open_writer(self, job_id: str) -> JobLogWriter | None:
        """The job's writer; None if logs are off or (with a warning) storage fails."""
        if self.store is None:
            return None
        try:
            return await asyncio.to_thread(JobLogWriter.open, self.store, job_id, self.max_bytes)
        except Exception as e:
            log.warning("job %s: its log at %s cannot be opened: %r", job_id, self.store.root, e)
            return None

    async def page(
        self, job_id: str, start: int, max_lines: int, status: str | None, writer: JobLogWriter | None
    ) -> JobLogPage:
        if self.store is None:
            if status is None:
                raise JobNotFoundError(f"Job {job_id} not found")
            return JobLogPage(job_id, 0, 0, [], status, status in TERMINAL)
        written = writer.flushed if writer is not None and not writer.closed else None
        return await asyncio.to_thread(read_page, self.store, job_id, start, max_lines, status, written)

    async def run_retention(self, keep: Callable[[str], bool]) -> None:
        """Prune now and then (every tenth of the expiration time, between 10 s and 10 min)."""
        store = self.store
        if store is None:
            return
        interval = max(10.0, min(self.ttl_s / 10, 600.0))
        while True:
            await asyncio.sleep(interval)
            try:
                deleted = await asyncio.to_thread(store.prune, keep, self.ttl_s)
            except Exception as e:
                log.warning("pruning job logs under %s failed: %r", store.root, e)
                continue
            if deleted:
                log.info("deleted the logs of %d expired job(s)", len(deleted))


__all__ = [
    "JOB_LOGS_DIR",
    "JOB_LOGS_MAX_BYTES",
    "JobLogStore",
    "JobLogWriter",
    "JobLogs",
    "job_logs_root",
    "read_page",
]
