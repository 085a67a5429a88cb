"""What a leading Dispatcher keeps outside its process (``high-availability.type: zookeeper``).

One :class:`DispatcherHaServices` per leadership session; the Dispatcher calls it at the
points where Flink's Dispatcher touches its HA services:

* **before a submission is acknowledged** the job goes into the JobGraphStore (a pointer in
  ZooKeeper, written in one transaction with a check of the leader's latch node, so a
  deposed leader can never store a job the next leader would not see) together with its
  Python files, which are copied to ``high-availability.storageDir`` (see below);
* **every JobMaster** gets a fencing token derived from the leader session (TaskExecutors
  reject tokens of another session), a checkpoint recorder (pointers to completed
  checkpoints in ZooKeeper, written before any task is told a checkpoint completed) and,
  when recovered, the first checkpoint id to use (ids continue after the last leader's);
* **when a job is globally terminal** its summary goes to ``<storageDir>/job-archive`` (so a
  new leader still answers ``GET /jobs/:id``), a dirty JobResultStore entry is written, the
  job graph, checkpoint pointers, id counter and stored files are removed, and the entry is
  marked clean (Flink's global cleanup);
* **on grant** (:meth:`recover`) the archive is read back, cleanup left dirty by a previous
  leader is finished, and every stored job without a job result is started again from its
  latest completed checkpoint.

Why the job's Python files go to the HA storage directory rather than a shared BlobServer
directory: a BlobServer's directory belongs to its process (created per start, deleted when
it closes, possibly on another host), while ``high-availability.storageDir`` is by definition
the durable location every JobManager reaches (any fsspec URL, e.g. s3://), which is what
Flink's HA BlobStore uses too. The new leader copies them back into its own BlobServer,
whose content addresses (sha256) do not change, so deployments name the same keys.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import tempfile
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import fsspec
import msgspec

from flott.configuration import Configuration, merged_job_config
from flott.errors import DuplicateJobSubmissionError, FlottError
from flott.runtime.checkpoint.coordinator import CheckpointConfig
from flott.runtime.checkpoint.metadata import CheckpointMetadata, load_metadata, snapshot_dir_of
from flott.runtime.checkpoint.restore import SnapshotToRestore
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage, join
from flott.runtime.highavailability.services import (
    CheckpointIDCounter,
    CompletedCheckpointPointer,
    CompletedCheckpointStore,
    HighAvailabilityServices,
    job_master_fencing_token,
)
from flott.runtime.jobgraph import JobGraph, decode_job_graph, encode_job_graph
from flott.runtime.messages.archived_execution_graph import ArchivedExecutionGraph
from flott.runtime.messages.execution import PythonArtifactDescriptor
from flott.runtime.messages.job import ExecutionGraphInfo, JobResult
from flott.runtime.messages.job_artifacts import JobArtifact

if TYPE_CHECKING:
    from flott.runtime.blob.blob_server import BlobServer

log = logging.getLogger(__name__)

_CHK_DIR = re.compile(r"chk-(\d+)")


class StoredJob(msgspec.Struct, frozen=True):
    """The JobGraphStore's payload: the job graph and the job's files (by BlobServer key)."""

    job_graph: bytes
    python_artifacts: list[PythonArtifactDescriptor] = []
    artifacts: list[JobArtifact] = []


class ArchivedJobRecord(msgspec.Struct):
    """A globally terminal job as the Dispatcher shows it (``<storageDir>/job-archive``)."""

    info: ExecutionGraphInfo
    result: JobResult
    graph: ArchivedExecutionGraph | None = None
    checkpoint_statistics: dict[str, Any] = {}
    archived_at_ms: int = 0


class RecoveringDispatcher(Protocol):
    """What recovery needs of the Dispatcher it hands jobs to (HA knows no more of it)."""

    def is_running(self, job_id: str) -> bool: ...

    async def start_recovered_job(
        self,
        job_graph: JobGraph,
        python_artifacts: list[PythonArtifactDescriptor],
        artifacts: list[JobArtifact],
        snapshot: SnapshotToRestore | None,
    ) -> None: ...

    def restore_archived_job(
        self,
        info: ExecutionGraphInfo,
        result: JobResult,
        graph: ArchivedExecutionGraph | None,
        checkpoint_statistics: dict[str, Any],
        age_s: float,
    ) -> None: ...


class _Files:
    """Blobs under one fsspec directory (synchronous: callers run it in a worker thread)."""

    def __init__(self, url: str) -> None:
        self.fs, self.base = fsspec.core.url_to_fs(url.rstrip("/"))

    def path(self, *parts: str) -> str:
        return "/".join([self.base, *parts])

    def write(self, data: bytes, *parts: str) -> None:
        path = self.path(*parts)
        self.fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
        tmp = f"{path}.inprogress-{os.getpid()}-{time.monotonic_ns()}"
        with self.fs.open(tmp, "wb") as f:
            f.write(data)
        self.fs.mv(tmp, path)

    def put_file(self, local: str, *parts: str) -> None:
        path = self.path(*parts)
        self.fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
        tmp = f"{path}.inprogress-{os.getpid()}-{time.monotonic_ns()}"
        self.fs.put_file(local, tmp)
        self.fs.mv(tmp, path)

    def read(self, *parts: str) -> bytes:
        with self.fs.open(self.path(*parts), "rb") as f:
            data: bytes = f.read()
        return data

    def exists(self, *parts: str) -> bool:
        return bool(self.fs.exists(self.path(*parts)))

    def names(self, *parts: str) -> list[str]:
        try:
            listed = self.fs.ls(self.path(*parts), detail=False)
            return [str(n).rstrip("/").rsplit("/", 1)[-1] for n in listed]
        except FileNotFoundError:
            return []

    def delete(self, *parts: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm(self.path(*parts), recursive=True)


class _CheckpointRecorder:
    """A JobMaster's :class:`~flott.runtime.highavailability.services.CheckpointRecorder`."""

    def __init__(
        self,
        store: CompletedCheckpointStore,
        counter: CheckpointIDCounter,
        leader_node: str | None,
        is_leader: Callable[[], bool],
    ) -> None:
        self._store = store
        self._counter = counter
        self._leader_node = leader_node
        self._is_leader = is_leader
        self._tasks: set[asyncio.Task[None]] = set()

    def checkpoint_triggered(self, checkpoint_id: int) -> None:
        task = asyncio.get_running_loop().create_task(self._advance(checkpoint_id + 1))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _advance(self, value: int) -> None:
        try:
            await self._counter.advance_to(value)
        except Exception as e:  # the pointers and RestoredFrom keep ids moving forward anyway
            log.debug("checkpoint id counter not advanced to %d: %r", value, e)

    async def checkpoint_completed(
        self, checkpoint_id: int, external_path: str, checkpoint_type: str
    ) -> None:
        if not self._is_leader():
            raise FlottError("no longer the leader")
        await self._store.add_checkpoint(
            CompletedCheckpointPointer(checkpoint_id, external_path, checkpoint_type),
            leader_node=self._leader_node,
        )


class DispatcherHaServices:
    """The Dispatcher's HA hooks for one leadership session (see the module docstring)."""

    def __init__(
        self,
        ha: HighAvailabilityServices,
        config: Configuration,
        session_id: str,
        leader_node: str | None,
        is_leader: Callable[[], bool],
        blob_server: BlobServer | None,
    ) -> None:
        self.ha = ha
        self.config = config
        self.session_id = session_id
        self.leader_node = leader_node
        self.is_leader = is_leader
        self.blob_server = blob_server
        self.job_graphs = ha.get_job_graph_store()
        self.job_results = ha.get_job_result_store()
        storage_dir = config.get("high-availability.storageDir", "").rstrip("/")
        cluster = config.get("high-availability.cluster-id", "/default").strip("/") or "default"
        self._blobs = _Files(f"{storage_dir}/{cluster}/blob")
        self._archive = _Files(f"{storage_dir}/{cluster}/job-archive")
        self._first_checkpoint_ids: dict[str, int] = {}

    # -- submission ----------------------------------------------------------------------------

    async def persist_job(
        self,
        job_graph: JobGraph,
        python_artifacts: list[PythonArtifactDescriptor],
        artifacts: list[JobArtifact],
    ) -> None:
        """Store the job (and its files) durably; raises instead of acknowledging otherwise."""
        job_id = job_graph.job_id
        if await self.job_results.has_job_result_entry(job_id):
            raise DuplicateJobSubmissionError(
                f"job {job_id} has already been submitted and is globally terminal"
            )
        if python_artifacts:
            await asyncio.to_thread(self._store_blobs, job_id, python_artifacts)
        payload = msgspec.msgpack.encode(
            StoredJob(encode_job_graph(job_graph), list(python_artifacts), list(artifacts))
        )
        await self.job_graphs.put_job_graph(job_id, payload, leader_node=self.leader_node)

    def _store_blobs(self, job_id: str, python_artifacts: list[PythonArtifactDescriptor]) -> None:
        server = self.blob_server
        if server is None:
            return
        for a in python_artifacts:
            name = f"blob_{a.blob_key}"
            if not self._blobs.exists(f"job_{job_id}", name):
                self._blobs.put_file(str(server.get_file(job_id, a.blob_key)), f"job_{job_id}", name)

    def job_master_options(self, job_graph: JobGraph) -> dict[str, Any]:
        job_id = job_graph.job_id
        return {
            "fencing_token": job_master_fencing_token(self.session_id),
            "checkpoint_recorder": _CheckpointRecorder(
                self.ha.get_completed_checkpoint_store(job_id),
                self.ha.get_checkpoint_id_counter(job_id),
                self.leader_node,
                self.is_leader,
            ),
            "first_checkpoint_id": self._first_checkpoint_ids.pop(job_id, 1),
        }

    # -- global termination --------------------------------------------------------------------

    async def job_terminal(self, job_id: str, record: ArchivedJobRecord) -> None:
        """The job is globally terminal: archive ``record`` durably, write its JobResultStore
        entry, then clean its HA data up."""
        if not self.is_leader():
            return  # the next leader decides (it recovers the job: its terminal state is not recorded)
        try:
            await asyncio.to_thread(self._archive.write, msgspec.msgpack.encode(record), job_id)
            await self.job_results.create_dirty_result(job_id, msgspec.to_builtins(record.result))
        except ValueError:
            pass  # an entry exists already (cleanup of an earlier attempt)
        except Exception as e:
            log.warning("job %s: could not record its job result: %r", job_id, e)
            return
        await self._cleanup(job_id)

    async def _cleanup(self, job_id: str) -> None:
        """Global cleanup; the dirty entry stays (and the next leader retries) if any step fails."""
        for attempt in range(5):
            try:
                await self.job_graphs.remove_job_graph(job_id)
                await self.ha.get_completed_checkpoint_store(job_id).shutdown(True)
                await self.ha.get_checkpoint_id_counter(job_id).shutdown(True)
                await asyncio.to_thread(self._blobs.delete, f"job_{job_id}")
                if await self.job_results.has_dirty_job_result_entry(job_id):
                    await self.job_results.mark_result_as_clean(job_id)
                return
            except Exception as e:
                log.info("job %s: global cleanup failed (%r); retrying", job_id, e)
                await asyncio.sleep(0.5 * (attempt + 1))
        log.warning("job %s: global cleanup did not finish; the next leader retries it", job_id)

    # -- recovery ------------------------------------------------------------------------------

    async def recover(self, dispatcher: RecoveringDispatcher) -> list[str]:
        """Finished jobs back into the archive, dirty cleanup finished, stored jobs running again.
        Returns the ids of the jobs started."""
        await self._restore_archive(dispatcher)
        dirty = await self.job_results.get_dirty_results()
        for job_id in dirty:
            await self._cleanup(job_id)
        started = []
        for job_id in await self.job_graphs.get_job_ids():
            if dispatcher.is_running(job_id):
                continue
            if await self.job_results.has_job_result_entry(job_id):
                await self._cleanup(job_id)  # terminal before the failover: never run again
                continue
            try:
                await self._recover_job(dispatcher, job_id)
                started.append(job_id)
            except FlottError as e:
                log.error("job %s could not be recovered: %s", job_id, e)
            except Exception as e:
                log.exception("job %s could not be recovered: %r", job_id, e)
        return started

    async def _recover_job(self, dispatcher: RecoveringDispatcher, job_id: str) -> None:
        payload = await self.job_graphs.recover_job_graph(job_id)
        if payload is None:
            return
        stored = msgspec.msgpack.decode(payload, type=StoredJob)
        job_graph = decode_job_graph(stored.job_graph)
        if stored.python_artifacts:
            await asyncio.to_thread(self._restore_blobs, job_id, stored.python_artifacts)
        pointers = await self.ha.get_completed_checkpoint_store(job_id).get_all_checkpoints()
        snapshot = await asyncio.to_thread(self._latest_snapshot, job_graph, pointers)
        counter = await self.ha.get_checkpoint_id_counter(job_id).get()
        first = max(counter, snapshot.metadata.checkpoint_id + 1 if snapshot is not None else 1)
        self._first_checkpoint_ids[job_id] = first
        origin = ""
        if snapshot is not None:
            origin = f" from checkpoint {snapshot.metadata.checkpoint_id} at {snapshot.external_path}"
        log.info("job %s recovered%s; checkpoint ids continue at %d", job_id, origin, first)
        await dispatcher.start_recovered_job(job_graph, stored.python_artifacts, stored.artifacts, snapshot)

    def _restore_blobs(self, job_id: str, python_artifacts: list[PythonArtifactDescriptor]) -> None:
        server = self.blob_server
        if server is None:
            return
        for a in python_artifacts:
            with contextlib.suppress(FlottError):
                server.get_file(job_id, a.blob_key)
                continue  # already here
            server.put_bytes(job_id, self._blobs.read(f"job_{job_id}", f"blob_{a.blob_key}"))

    def _latest_snapshot(
        self, job_graph: JobGraph, pointers: list[CompletedCheckpointPointer]
    ) -> SnapshotToRestore | None:
        """The newest completed checkpoint whose metadata loads.

        The recorded pointers are the candidates, plus any ``chk-<n>`` of the job's checkpoint
        directory with a ``_metadata``: a checkpoint can complete (metadata written, the one
        before it disposed) just before the leader dies, ahead of its pointer. Restoring it is
        correct: no task was told it completed, so its pending side effects are committed by
        the restore itself.
        """
        storage = FsspecCheckpointStorage()
        candidates = {p.checkpoint_id: p.external_path for p in pointers}
        job_config = merged_job_config(self.config.to_dict(), job_graph.config)
        base = CheckpointConfig.from_config(job_config).checkpoints_dir or os.path.join(
            tempfile.gettempdir(), "flott-checkpoints"
        )
        job_dir = join(base, job_graph.job_id)
        try:
            fs, root = fsspec.core.url_to_fs(job_dir)
            for name in fs.ls(root, detail=False):
                m = _CHK_DIR.fullmatch(str(name).rstrip("/").rsplit("/", 1)[-1])
                if m is not None:
                    candidates.setdefault(int(m.group(1)), join(job_dir, m.group(0)))
        except (FileNotFoundError, NotADirectoryError):
            pass
        except Exception as e:
            log.warning("job %s: cannot list %s: %r", job_graph.job_id, job_dir, e)
        found: list[tuple[CheckpointMetadata, str]] = []
        for checkpoint_id in sorted(candidates, reverse=True):
            path = candidates[checkpoint_id]
            try:
                metadata = load_metadata(storage, path)
            except (FlottError, OSError) as e:
                log.info(
                    "job %s: checkpoint %d at %s not usable: %s", job_graph.job_id, checkpoint_id, path, e
                )
                continue
            found.append((metadata, snapshot_dir_of(path)))
        if not found:
            return None
        # The older ones are still the job's retained checkpoints: the new leader retains them
        # again (their shared files registered) and disposes of them as its checkpoints subsume them.
        latest, path = found[0]
        return SnapshotToRestore(latest, path, allow_non_restored=True, older_checkpoints=found[:0:-1])

    async def _restore_archive(self, dispatcher: RecoveringDispatcher) -> None:
        records = await asyncio.to_thread(self._read_archive)
        now_ms = int(time.time() * 1000)
        for record in records:
            dispatcher.restore_archived_job(
                record.info,
                record.result,
                record.graph,
                record.checkpoint_statistics,
                (now_ms - record.archived_at_ms) / 1000,
            )

    def _read_archive(self) -> list[ArchivedJobRecord]:
        ttl_ms = self.config.get_int("jobstore.expiration-time") * 1000
        capacity = self.config.get_int("jobstore.max-capacity")
        now_ms = int(time.time() * 1000)
        records = []
        for name in self._archive.names():
            if ".inprogress" in name:
                continue
            try:
                record = msgspec.msgpack.decode(self._archive.read(name), type=ArchivedJobRecord)
            except (OSError, msgspec.DecodeError, msgspec.ValidationError) as e:
                log.warning("unreadable archived job %s: %r", name, e)
                continue
            if now_ms - record.archived_at_ms > ttl_ms:
                self._archive.delete(name)
                continue
            records.append(record)
        records.sort(key=lambda r: r.archived_at_ms)
        for old in records[: max(0, len(records) - capacity)]:
            self._archive.delete(old.info.job_id)
        return records[max(0, len(records) - capacity) :]
