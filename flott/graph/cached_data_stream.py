"""``DataStream.cache()``: an intermediate result kept across the jobs of one environment (the
transformation, the files; the CachedDataStream class is in ``data_stream``, as in PyFlink).

Flink's semantics, which flott follows:

* In BATCH execution the first job that uses the cached stream computes it and also writes it
  (a ``CacheWrite`` sink beside the stream's consumers); once that ``execute()`` succeeded, the
  stream counts as cached, and every later job of the same environment reads it back (a
  ``CacheRead`` source) instead of running the operators that produced it.
* In STREAMING execution an uncached stream is simply used as is (Flink does not produce caches
  in streaming jobs); a stream cached by an earlier BATCH job is read from the cache.
* ``invalidate()`` drops the cached result; the next job computes (and caches) it again.
  ``env.close()`` drops every cache of the environment.

Where flott keeps it: one file per subtask under a temporary directory of the client's machine,
which the TaskExecutors of the embedded cluster (and of a session cluster on the same machine)
read and write. Flink keeps it in the TaskManagers' result partitions instead. Records are
cached as values: a stream carrying event timestamps is refused (see the stream graph generator).
"""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
import uuid
from dataclasses import dataclass, field
from typing import Any

from flott.api.connector import Boundedness
from flott.api.streaming.transformations import Transformation

__all__ = [
    "CacheRead",
    "CacheTransformation",
    "CacheWrite",
    "PendingCache",
    "drop_caches",
    "mark_cached",
    "new_cache_dir",
]

CACHE_READ_NAME = "CacheRead"
CACHE_WRITE_NAME = "CacheWrite"


def _part_file(directory: str, subtask_index: int) -> str:
    return os.path.join(directory, f"part-{subtask_index:05d}")


@dataclass(eq=False)
class CacheTransformation(Transformation):
    """``cache()``: ``input`` until its result is cached, then a read of ``cached_dir``."""

    input: Transformation | None = None
    cache_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    cached_dir: str | None = None
    """Set once a job that wrote the cache succeeded; cleared by ``invalidate()``."""
    cached_parallelism: int = 1

    @property
    def inputs(self) -> list[Transformation]:
        return [self.input] if self.input is not None else []


class CacheWrite:
    """The Sink writing one subtask's share of the cached stream (pickled batches, one file)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def create_writer(self, subtask_index: int, parallelism: int, input_type: object | None) -> _CacheWriter:
        return _CacheWriter(_part_file(self.directory, subtask_index))


class _CacheWriter:
    def __init__(self, path: str) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self._path = path
        self._tmp = f"{path}.inprogress"
        self._file: Any = open(self._tmp, "wb")

    def write_batch(self, records: list[Any]) -> None:
        if records:
            pickle.dump(records, self._file, protocol=5)

    def flush(self, end_of_input: bool) -> None:
        self._file.flush()
        if end_of_input:
            self._file.close()
            os.replace(self._tmp, self._path)

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()


class CacheRead:
    """The bounded Source of a cached stream: subtask ``i`` reads the file subtask ``i`` wrote."""

    def __init__(self, directory: str, parallelism: int, output_type: Any = None) -> None:
        self.directory = directory
        self.parallelism = parallelism
        self.output_type = output_type

    def get_boundedness(self) -> Boundedness:
        return Boundedness.BOUNDED

    def get_produced_type(self) -> Any:
        return self.output_type

    def create_reader(self, subtask_index: int, parallelism: int) -> _CacheReader:
        if parallelism != self.parallelism:
            raise ValueError(
                f"a cached stream is read at the parallelism it was written with ({self.parallelism}), "
                f"not {parallelism}"
            )
        path = _part_file(self.directory, subtask_index)
        if not os.path.exists(path):
            raise FileNotFoundError(
                f"the cached result {path} is gone; call invalidate() on the CachedDataStream to "
                "compute it again"
            )
        return _CacheReader(path)


class _CacheReader:
    def __init__(self, path: str) -> None:
        self._file: Any = open(path, "rb")

    def poll_batch(self, max_records: int) -> list[Any] | None:
        if self._file.closed:
            return None
        try:
            batch: list[Any] = pickle.load(self._file)
        except EOFError:
            self._file.close()
            return None
        return batch

    def close(self) -> None:
        self._file.close()


@dataclass(eq=False)
class PendingCache:
    """A cache a job writes; it becomes the transformation's cache once ``execute()`` succeeded."""

    transformation: CacheTransformation
    directory: str
    parallelism: int


def new_cache_dir(env: Any) -> str:
    """A fresh directory for one cached stream, under the environment's cache root."""
    root = getattr(env, "_cache_root", None)
    if root is None:
        root = tempfile.mkdtemp(prefix="flott-cache-")
        env._cache_root = root
    return os.path.join(root, uuid.uuid4().hex)


def mark_cached(env: Any, written: list[PendingCache]) -> None:
    """After a successful ``execute()``: later jobs of ``env`` read these caches."""
    cached: list[CacheTransformation] = env.__dict__.setdefault("_cached_transformations", [])
    for pending in written:
        t = pending.transformation
        t.cached_dir = pending.directory
        t.cached_parallelism = pending.parallelism
        cached.append(t)


def drop_caches(env: Any) -> None:
    """Delete every cached result of ``env`` (``env.close()``); their streams compute again."""
    for t in env.__dict__.pop("_cached_transformations", []):
        t.cached_dir = None
    root = getattr(env, "_cache_root", None)
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)
        env._cache_root = None
