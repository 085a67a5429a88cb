"""Where checkpoint and savepoint files go: a small storage interface over fsspec.

The CheckpointCoordinator and the snapshot writers only talk to :class:`CheckpointStorage`,
so tests can use :class:`MemoryCheckpointStorage` and production any fsspec URL
(``file:///...``, a plain local path, ``s3://...``, ``memory://...``).

``write_atomic`` writes a temporary sibling and renames it into place, so a reader never sees a
half-written ``_metadata``: either the checkpoint is complete or it does not exist.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import secrets
from typing import Any, Protocol

import fsspec

from flott.runtime.checkpoint.errors import SnapshotFormatError


def join(base: str, *parts: str) -> str:
    """Join path segments with ``/`` (fsspec paths are always ``/``-separated, URLs too)."""
    out = base.rstrip("/")
    for part in parts:
        out = out + "/" + part.strip("/")
    return out


class CheckpointStorage(Protocol):
    def write_atomic(self, path: str, data: bytes) -> None: ...

    def read(self, path: str) -> bytes: ...

    def exists(self, path: str) -> bool: ...

    def mkdirs(self, path: str) -> None: ...

    def delete_dir(self, path: str) -> None: ...


class FsspecCheckpointStorage:
    """:class:`CheckpointStorage` over any fsspec filesystem; paths are URLs or local paths."""

    def __init__(self, **storage_options: Any) -> None:
        self._options = storage_options
        self._made_dirs: set[str] = set()

    def _fs(self, path: str) -> tuple[Any, str]:
        fs, _, paths = fsspec.get_fs_token_paths(path, storage_options=self._options)
        return fs, paths[0]

    @staticmethod
    def _local_path(path: str) -> str | None:
        """The OS path of a local file (plain path or ``file://`` URL), else None."""
        if path.startswith("file://"):
            return path[len("file://") :]
        if "://" in path or "::" in path:
            return None
        return path

    def write_atomic(self, path: str, data: bytes) -> None:
        local = self._local_path(path)
        if local is not None:
            # Direct OS calls: a checkpoint writes a file per key group, and fsspec's per-call
            # filesystem resolution cost milliseconds each (bench/checkpoint_bench.py's profile).
            parent = os.path.dirname(local)
            if parent and parent not in self._made_dirs:
                os.makedirs(parent, exist_ok=True)
                if len(self._made_dirs) > 10_000:
                    self._made_dirs.clear()  # directories of long-gone checkpoints
                self._made_dirs.add(parent)
            tmp = f"{local}.inprogress-{secrets.token_hex(6)}"
            try:
                with open(tmp, "wb") as f:
                    f.write(data)
                os.replace(tmp, local)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.remove(tmp)
                raise
            return
        fs, p = self._fs(path)
        parent = posixpath.dirname(p)
        if parent:
            fs.makedirs(parent, exist_ok=True)
        tmp = f"{p}.inprogress-{secrets.token_hex(6)}"
        with fs.open(tmp, "wb") as f:
            f.write(data)
        try:
            fs.mv(tmp, p)
        except Exception:
            fs.rm(tmp)
            raise

    def read(self, path: str) -> bytes:
        fs, p = self._fs(path)
        try:
            with fs.open(p, "rb") as f:
                data: bytes = f.read()
        except FileNotFoundError as e:
            raise SnapshotFormatError(f"missing snapshot file {path}") from e
        except IsADirectoryError as e:
            raise SnapshotFormatError(f"expected a file but found a directory: {path}") from e
        return data

    def exists(self, path: str) -> bool:
        fs, p = self._fs(path)
        return bool(fs.exists(p))

    def mkdirs(self, path: str) -> None:
        fs, p = self._fs(path)
        fs.makedirs(p, exist_ok=True)

    def delete_dir(self, path: str) -> None:
        local = self._local_path(path)
        if local is not None:
            prefix = local.rstrip("/") + "/"
            self._made_dirs = {d for d in self._made_dirs if not (d + "/").startswith(prefix)}
        fs, p = self._fs(path)
        if fs.exists(p):
            fs.rm(p, recursive=True)


class MemoryCheckpointStorage:
    """In-process storage for tests of the coordinator: a dict of path -> bytes."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.dirs: set[str] = set()
        self.deleted_dirs: list[str] = []

    def write_atomic(self, path: str, data: bytes) -> None:
        self.files[path] = bytes(data)

    def read(self, path: str) -> bytes:
        try:
            return self.files[path]
        except KeyError as e:
            raise SnapshotFormatError(f"missing snapshot file {path}") from e

    def exists(self, path: str) -> bool:
        return path in self.files or path in self.dirs

    def mkdirs(self, path: str) -> None:
        self.dirs.add(path.rstrip("/"))

    def delete_dir(self, path: str) -> None:
        prefix = path.rstrip("/") + "/"
        for p in [p for p in self.files if p.startswith(prefix)]:
            del self.files[p]
        self.dirs.discard(path.rstrip("/"))
        self.deleted_dirs.append(path)
