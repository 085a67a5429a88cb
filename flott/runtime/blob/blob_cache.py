"""The TaskExecutor's BlobCache: each blob downloaded once per TaskExecutor, verified by its key.

Flink: PermanentBlobCache. A blob is fetched from the BlobServer the first
time a job on this TaskExecutor needs it; concurrent requests for the same key
share one download; the bytes are hashed while they arrive and a blob whose
sha256 is not its key is never used. The cache remembers which jobs use each
blob and deletes a blob once the last of them has left the TaskExecutor.

Layout: ``<cache dir>/blobs/blob_<sha256>`` (the cache dir is per TaskExecutor).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from flott.errors import JobArtifactError, RpcConnectionError
from flott.runtime.blob.protocol import CHUNK_SIZE, MAX_REQUEST_LINE, encode_request, is_blob_key
from flott.runtime.rpc.service import parse_address

if TYPE_CHECKING:
    from flott.ssl_context import InternalSsl

log = logging.getLogger(__name__)


class _ServerRefused(JobArtifactError):
    """The server answered ERR: retrying will not help."""


class BlobCache:
    def __init__(
        self,
        storage_dir: Path,
        retries: int = 5,
        timeout_s: float = 30.0,
        tls: InternalSsl | None = None,
    ) -> None:
        """``tls``: fetch over mutually authenticated TLS (``security.ssl.internal.*``)."""
        self._dir = storage_dir / "blobs"
        self._tls = tls
        self._retries = max(0, retries)
        self._timeout_s = timeout_s
        self._downloads: dict[str, asyncio.Future[Path]] = {}
        self._users: dict[str, set[str]] = {}

    def path_of(self, key: str) -> Path:
        return self._dir / f"blob_{key}"

    async def get_file(self, job_id: str, key: str, server_address: str, user: str | None = None) -> Path:
        """The local copy of blob ``key`` of ``job_id``, downloading it if this TaskExecutor has none.

        ``user`` (default: the job id) holds a reference on the blob until
        :meth:`release` is called for it.
        """
        if not is_blob_key(key):
            raise JobArtifactError(f"not a blob key: {key!r}")
        self._users.setdefault(key, set()).add(user or job_id)
        path = self.path_of(key)
        if path.is_file():
            return path
        pending = self._downloads.get(key)
        if pending is None:
            pending = asyncio.ensure_future(self._download(job_id, key, server_address))
            self._downloads[key] = pending
            pending.add_done_callback(lambda _: self._downloads.pop(key, None))
        return await asyncio.shield(pending)

    def release(self, user: str) -> None:
        """Forget ``user``'s references; delete the blobs nobody else here uses."""
        for key in [k for k, users in self._users.items() if user in users]:
            users = self._users[key]
            users.discard(user)
            if not users:
                del self._users[key]
                if key not in self._downloads:
                    self.path_of(key).unlink(missing_ok=True)

    async def _download(self, job_id: str, key: str, server_address: str) -> Path:
        self._dir.mkdir(parents=True, exist_ok=True)
        last: Exception | None = None
        for attempt in range(self._retries + 1):
            try:
                return await self._download_once(job_id, key, server_address)
            except _ServerRefused:
                raise
            except (OSError, asyncio.IncompleteReadError, TimeoutError, JobArtifactError) as e:
                last = e
                log.info("fetching blob %s from %s failed (attempt %d): %s", key[:12], server_address,
                         attempt + 1, e)
                if attempt < self._retries:
                    await asyncio.sleep(min(0.1 * 2**attempt, 2.0))
        if isinstance(last, JobArtifactError):
            raise last
        raise JobArtifactError(
            f"cannot fetch blob {key[:12]}… of job {job_id} from the BlobServer at {server_address} "
            f"after {self._retries + 1} attempts: {last}"
        )

    async def _download_once(self, job_id: str, key: str, server_address: str) -> Path:
        try:
            host, port = parse_address(server_address)
        except RpcConnectionError as e:
            raise _ServerRefused(f"bad BlobServer address: {e}") from None
        tmp = self._dir / f".incoming-{uuid.uuid4().hex}"
        async with asyncio.timeout(self._timeout_s):
            tls = self._tls
            reader, writer = await asyncio.open_connection(
                host,
                port,
                limit=MAX_REQUEST_LINE * 2,
                ssl=tls.client if tls is not None else None,
                ssl_handshake_timeout=tls.handshake_timeout_s if tls is not None else None,
            )
        try:
            writer.write(encode_request(job_id, key))
            await writer.drain()
            async with asyncio.timeout(self._timeout_s):
                header = (await reader.readuntil(b"\n")).decode("utf-8", "replace").strip()
            status, _, rest = header.partition(" ")
            if status == "ERR":
                raise _ServerRefused(
                    f"the BlobServer at {server_address} has no blob {key[:12]}… for job {job_id}: {rest}"
                )
            if status != "OK" or not rest.isdigit():
                raise JobArtifactError(
                    f"unexpected answer from the BlobServer at {server_address}: {header!r}"
                )
            remaining = int(rest)
            digest = hashlib.sha256()
            with tmp.open("wb") as f:
                while remaining > 0:
                    async with asyncio.timeout(self._timeout_s):
                        chunk = await reader.read(min(CHUNK_SIZE, remaining))
                    if not chunk:
                        raise asyncio.IncompleteReadError(b"", remaining)
                    digest.update(chunk)
                    f.write(chunk)
                    remaining -= len(chunk)
            actual = digest.hexdigest()
            if actual != key:
                raise JobArtifactError(
                    f"blob {key[:12]}… of job {job_id} from {server_address} is corrupt: its sha256 is "
                    f"{actual[:12]}…"
                )
            path = self.path_of(key)
            os.replace(tmp, path)
            return path
        finally:
            tmp.unlink(missing_ok=True)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
