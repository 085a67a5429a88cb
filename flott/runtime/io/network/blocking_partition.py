"""Blocking result partitions: the producer's whole output, kept until its consumers read it.

Flink's adaptive batch scheduler deploys a consumer only once all its producers finished, so a
producer's output must outlive the producer task, and the producer must never wait for a
consumer (there is none yet). A :class:`BlockingResultPartition` therefore never blocks the
producer: every batch is pickled at once (its size is what the scheduler decides the
consumer's parallelism from, :attr:`BlockingResultPartition.num_bytes_produced`) and kept in
memory up to a bound per partition; beyond it the pickles go to a spill file in the
TaskExecutor's temporary directory (``io.tmp.dirs``) and are read back as consumers ask
(Flink's blocking shuffle writes files too). A subpartition's buffers leave memory as its
reader takes them; the file is deleted when every subpartition was consumed or the partition
is released (cancel, failover, the job's end).

Readers are the ones of pipelined partitions: a local channel gets the unpickled list, a
remote one the pickle framed as is (no second serialisation).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Callable

from flott.errors import DataExchangeError, TaskCancelledError
from flott.runtime.io.network.partition import (
    _FAILED,
    _OPEN,
    _RELEASED,
    ResultPartition,
    ResultSubpartition,
)
from flott.runtime.io.network.record_codec import deserialize

__all__ = ["BlockingResultPartition"]


class _Spilled:
    """Where a pickled batch lies in the partition's spill file."""

    __slots__ = ("length", "offset")

    def __init__(self, offset: int, length: int) -> None:
        self.offset = offset
        self.length = length


class BlockingResultSubpartition(ResultSubpartition):
    """Unbounded queue of pickled batches (in memory or spilled) for one consumer subtask."""

    __slots__ = ()

    _partition: BlockingResultPartition

    def add(self, item: object) -> None:
        """Store one batch or event; never blocks (the producer runs before its consumers)."""
        if type(item) is list:
            item = self._partition._store(self._partition.encode_records(item))
        with self._cond:
            if self._state != _OPEN:
                self._raise_closed_locked()
            self._buffers.append(item)
            self.num_buffers_in += 1
            reader = self._reader
            if reader is None or self._notified:
                return
            self._notified = True
        reader.notify_data_available()

    def _raise_closed_locked(self) -> None:
        if self._state == _RELEASED:
            raise TaskCancelledError(f"result partition {self.name} was released")
        if self._state == _FAILED:
            raise DataExchangeError(self._failure)
        raise DataExchangeError(f"result partition {self.name} is already finished")

    def take_one(self) -> tuple[object, bool]:
        item, more = super().take_one()
        return self._materialize(item), more

    def take_many(self, max_buffers: int) -> tuple[list[object], str | None]:
        taken, error = super().take_many(max_buffers)
        if error is not None or not taken:
            return taken, error
        try:
            return [self._materialize(item) for item in taken], None
        except DataExchangeError as e:
            return [], str(e)

    def _materialize(self, item: object) -> object:
        """A stored batch in the form the reader takes (events and the end marker pass as they are)."""
        if type(item) is bytes:
            payload = item
            self._partition._release_memory(len(payload))
        elif type(item) is _Spilled:
            payload = self._partition._read_spilled(item)
        else:
            return item
        reader = self._reader
        if reader is not None and reader.is_remote:
            return reader.from_payload(payload)
        return deserialize(payload)


class BlockingResultPartition(ResultPartition):
    """One producer subtask's whole output for one intermediate data set; see the module docstring."""

    _subpartition_type = BlockingResultSubpartition

    def __init__(
        self,
        partition_id: str,
        num_subpartitions: int,
        memory_bytes: int,
        spill_dir: str,
        on_done: Callable[[ResultPartition, str], None] | None = None,
    ) -> None:
        super().__init__(partition_id, num_subpartitions, 1, on_done)
        self._memory_bytes = memory_bytes
        self._spill_dir = spill_dir
        self._lock = threading.Lock()
        self._in_memory = 0
        self._spill_fd: int | None = None
        self._spill_path: str | None = None
        self._spill_size = 0
        self._closed_files = False
        self.num_bytes_produced = 0
        """Bytes of all pickled batches written (Flink's numBytesProduced of a blocking result)."""
        self.num_bytes_spilled = 0

    def _store(self, payload: bytes) -> bytes | _Spilled:
        """Producer thread: keep ``payload`` in memory while under the bound, else append it to the file."""
        n = len(payload)
        with self._lock:
            self.num_bytes_produced += n
            if self._in_memory + n <= self._memory_bytes or self._closed_files:
                self._in_memory += n
                return payload
            if self._spill_fd is None:
                os.makedirs(self._spill_dir, exist_ok=True)
                fd, path = tempfile.mkstemp(prefix="flott-blocking-", suffix=".spill", dir=self._spill_dir)
                self._spill_fd, self._spill_path = fd, path
            fd = self._spill_fd
            offset = self._spill_size
            self._spill_size += n
            self.num_bytes_spilled += n
        view = memoryview(payload)
        written = 0
        while written < n:  # the one producer thread appends; readers only pread written ranges
            written += os.pwrite(fd, view[written:], offset + written)
        return _Spilled(offset, n)

    def _release_memory(self, n: int) -> None:
        with self._lock:
            self._in_memory -= n

    def _read_spilled(self, where: _Spilled) -> bytes:
        fd = self._spill_fd
        try:
            if fd is None or self._closed_files:
                raise OSError("the spill file is closed")
            data = os.pread(fd, where.length, where.offset)
        except OSError as e:
            raise DataExchangeError(
                f"result partition {self.partition_id}: cannot read its spilled data: {e}"
            ) from e
        if len(data) != where.length:
            raise DataExchangeError(f"result partition {self.partition_id}: its spill file is truncated")
        return data

    @property
    def spill_path(self) -> str | None:
        return self._spill_path

    def _report_done(self, reason: str) -> None:
        super()._report_done(reason)
        with self._lock:
            if self._closed_files:
                return
            self._closed_files = True
            fd, path = self._spill_fd, self._spill_path
            self._spill_fd = None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        if path is not None:
            with contextlib.suppress(OSError):
                os.unlink(path)
