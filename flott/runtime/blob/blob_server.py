"""The JobManager's BlobServer: a job's shipped files, stored by content and served to TaskExecutors.

Why a server of its own next to the RPC service: artifacts can be large
(wheels, zipped packages), and streaming them over the multiplexed RPC
connection would hold up heartbeats behind megabytes of payload. A separate
TCP listener on ``blob.server.port`` (Flink's key) lets a TaskExecutor pull a
file with ``sendfile`` while RPC stays responsive.

Layout (Flink: ``blobStore-<uuid>/job_<jobid>/blob_p-<key>``)::

    <blob.storage.directory or tmp>/blobStore-<uuid>/
        job_<job_id>/blob_<sha256>

Blobs are kept per job, so cleaning up a globally terminal job is removing one
directory, and a blob is only served to a request that names the job it
belongs to. The store directory is created on the first put and removed when
the server closes. Putting is synchronous file I/O: callers on an event loop
run it with ``asyncio.to_thread``.

With ``security.ssl.internal.enabled`` the server (and the TaskExecutors' BlobCache) speak
mutually authenticated TLS; the file is then copied through the TLS transport instead of
``sendfile``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import shutil
import tempfile
import uuid
from pathlib import Path

from flott.configuration import Configuration
from flott.errors import ClusterError, JobArtifactError
from flott.runtime.blob.protocol import (
    BLOB_FETCH_NUM_CONCURRENT,
    BLOB_SERVER_PORT,
    BLOB_STORAGE_DIRECTORY,
    CHUNK_SIZE,
    MAX_REQUEST_LINE,
    decode_request,
    is_blob_key,
    is_job_id,
    parse_port_range,
)
from flott.ssl_context import internal_ssl

log = logging.getLogger(__name__)

_REQUEST_TIMEOUT_S = 10.0
_COPY_CHUNK_BYTES = 1 << 20
"""Chunk size when the event loop cannot sendfile (uvloop): the file is copied through the transport."""


class BlobServer:
    """Content-addressed, per-job file store with a GET-only TCP server (Flink: BlobServer)."""

    def __init__(self, config: Configuration) -> None:
        base = config.get(BLOB_STORAGE_DIRECTORY, "") or tempfile.gettempdir()
        self.storage_dir = Path(base).expanduser().resolve() / f"blobStore-{uuid.uuid4()}"
        self._bind_host = config.get("jobmanager.bind-host")
        self._advertised_host = config.get("jobmanager.rpc.address")
        self._ports = parse_port_range(config.get(BLOB_SERVER_PORT, "0"))
        self._concurrent = asyncio.Semaphore(max(1, config.get_int(BLOB_FETCH_NUM_CONCURRENT, 50)))
        self._tls = internal_ssl(config)
        """``security.ssl.internal.*``: only TaskExecutors with a trusted certificate fetch blobs."""
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.port = -1

    @property
    def address(self) -> str:
        """``host:port`` TaskExecutors fetch from (the JobManager's advertised RPC host)."""
        return f"{self._advertised_host}:{self.port}"

    async def start(self) -> str:
        last: OSError | None = None
        for port in self._ports:
            try:
                tls = self._tls
                self._server = await asyncio.start_server(
                    self._serve,
                    self._bind_host,
                    port,
                    limit=MAX_REQUEST_LINE * 2,
                    ssl=tls.server if tls is not None else None,
                    ssl_handshake_timeout=tls.handshake_timeout_s if tls is not None else None,
                )
                break
            except OSError as e:
                last = e
        if self._server is None:
            raise ClusterError(
                f"the BlobServer could not bind to {self._bind_host} on any port of "
                f"{BLOB_SERVER_PORT}: {last}"
            )
        self.port = self._server.sockets[0].getsockname()[1]
        log.info("BlobServer at %s, storing under %s", self.address, self.storage_dir)
        return self.address

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1.0)
        await asyncio.to_thread(shutil.rmtree, self.storage_dir, True)

    # -- store ---------------------------------------------------------------------------------

    def job_dir(self, job_id: str) -> Path:
        if not is_job_id(job_id):
            raise JobArtifactError(f"not a valid job id for the BlobServer: {job_id!r}")
        return self.storage_dir / f"job_{job_id}"

    def put_file(self, job_id: str, path: Path, expected_sha256: str | None = None) -> str:
        """Copy ``path`` into the job's store; returns its key (sha256).

        ``expected_sha256`` (what the REST endpoint computed while receiving
        the upload) is checked against the bytes actually stored.
        """
        job_dir = self.job_dir(job_id)
        job_dir.mkdir(parents=True, exist_ok=True)
        tmp = job_dir / f".incoming-{uuid.uuid4().hex}"
        digest = hashlib.sha256()
        try:
            with path.open("rb") as src, tmp.open("wb") as dst:
                while chunk := src.read(CHUNK_SIZE):
                    digest.update(chunk)
                    dst.write(chunk)
            key = digest.hexdigest()
            if expected_sha256 is not None and key != expected_sha256:
                raise JobArtifactError(
                    f"the job file {path.name!r} changed after it was received "
                    f"(sha256 {key[:12]}…, expected {expected_sha256[:12]}…)"
                )
            os.replace(tmp, job_dir / f"blob_{key}")
        except OSError as e:
            raise JobArtifactError(
                f"cannot store the job file {str(path)!r} in the BlobServer: {e}"
            ) from None
        finally:
            tmp.unlink(missing_ok=True)
        return key

    def put_bytes(self, job_id: str, data: bytes) -> str:
        key = hashlib.sha256(data).hexdigest()
        job_dir = self.job_dir(job_id)
        job_dir.mkdir(parents=True, exist_ok=True)
        tmp = job_dir / f".incoming-{uuid.uuid4().hex}"
        tmp.write_bytes(data)
        os.replace(tmp, job_dir / f"blob_{key}")
        return key

    def get_file(self, job_id: str, key: str) -> Path:
        if not is_blob_key(key):
            raise JobArtifactError(f"not a blob key: {key!r}")
        path = self.job_dir(job_id) / f"blob_{key}"
        if not path.is_file():
            raise JobArtifactError(f"the BlobServer holds no blob {key[:12]}… for job {job_id}")
        return path

    def has_job(self, job_id: str) -> bool:
        return self.job_dir(job_id).is_dir()

    def cleanup_job(self, job_id: str) -> None:
        """Delete every blob of a globally terminal job (Flink: global cleanup of the BlobServer)."""
        shutil.rmtree(self.job_dir(job_id), ignore_errors=True)

    def retain_jobs(self, job_ids: set[str]) -> None:
        """Delete the blobs of every job not named (Flink B11: keep only recovered jobs' blobs)."""
        if not self.storage_dir.is_dir():
            return
        for d in self.storage_dir.iterdir():
            if d.is_dir() and d.name.startswith("job_") and d.name[4:] not in job_ids:
                shutil.rmtree(d, ignore_errors=True)

    # -- serving -------------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            async with self._concurrent:
                await self._answer(reader, writer)
        except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError) as e:
            log.debug("blob request from %s failed: %s", writer.get_extra_info("peername"), e)
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async with asyncio.timeout(_REQUEST_TIMEOUT_S):
            line = await reader.readuntil(b"\n")
        try:
            job_id, key = decode_request(line)
            path = self.get_file(job_id, key)
            f = path.open("rb")
        except (ValueError, JobArtifactError, OSError) as e:
            message = str(e).replace("\n", " ")
            writer.write(f"ERR {message}\n".encode("utf-8", "replace"))
            await writer.drain()
            return
        with f:
            size = os.fstat(f.fileno()).st_size
            writer.write(f"OK {size}\n".encode("ascii"))
            await writer.drain()
            try:
                await asyncio.get_running_loop().sendfile(writer.transport, f)
            except NotImplementedError:  # uvloop has no loop.sendfile: copy in chunks instead
                while chunk := f.read(_COPY_CHUNK_BYTES):
                    writer.write(chunk)
                    await writer.drain()
            await writer.drain()
