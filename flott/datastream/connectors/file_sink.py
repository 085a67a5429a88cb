"""``FileSink`` (row format): one line per record, Flink's bucket/part-file layout on disk.

Layout, as Flink's ``FileSink`` writes it::

    <base_path>/<bucket id>/part-<uuid>-<counter><suffix>            finished part files
    <base_path>/<bucket id>/.part-<uuid>-<counter><suffix>.inprogress.<uuid>   being written

The bucket id comes from the bucket assigner (``yyyy-MM-dd--HH`` of the
processing time by default; ``base_path_bucket_assigner`` writes into the base
path itself); ``<uuid>`` is fresh per bucket and writer, so parallel subtasks
never collide; ``part``/suffix come from ``OutputFileConfig``. An in-progress
file is finalised (closed and renamed to its visible name) when it rolls (size,
rollover interval or inactivity per the rolling policy) and at end of input.
Files of a job that is cancelled stay hidden ``.inprogress`` files, as in Flink.

Each record is written as ``format_record(value, input_type)`` + ``\\n`` in the
encoder's charset (Java's ``SimpleStringEncoder`` writes ``toString`` + ``\\n``),
with one ``write`` call per batch.

Exactly-once with checkpoints (Flink's two-phase-commit Sink V2). The runtime
switches a writer to transactional mode with ``set_transactional(True)`` before
its first ``write_batch``. Then no part file becomes visible by the writer's own
doing until end of input: a roll (size, time, ``on_checkpoint``) closes the file
and keeps it hidden as a *pending* file; ``prepare_commit(checkpoint_id)`` closes
every in-progress file too (a roll on every checkpoint, whatever the rolling
policy, as Flink's bulk formats do), makes them durable (``fsync`` for local
files) and returns ``(in-progress path, final path)`` pairs for all files
closed since the previous ``prepare_commit``. ``FileSink.commit(committables)``
renames them to their final names, idempotently, once the checkpoint is
complete (and again after a restore). End of input (``flush(True)``) still
commits everything the writer wrote, including committables it handed out
whose commit it was not told about (``notify_checkpoint_complete``). Part file
names are unique per writer instance: a fresh uuid per bucket and writer, and
``StreamingFileSink``'s ``part-<subtask>-<n>`` names continue after the
largest counter already in the bucket directory (final or in progress) in
transactional mode, as Flink restores its part counter from state.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import posixpath
import re
import time
import uuid
from collections.abc import Callable
from typing import Any, BinaryIO

import fsspec

from flott.common.serialization import Encoder
from flott.common.typeinfo import TypeInformation, format_lines, make_formatter
from flott.datastream.connectors.base import Sink, TwoPhaseCommittingSinkWriter

__all__ = [
    "BucketAssigner",
    "DefaultRollingPolicy",
    "ElementBucketAssigner",
    "FileCompactStrategy",
    "FileCompactor",
    "FileSink",
    "OnCheckpointRollingPolicy",
    "OutputFileConfig",
    "RollingPolicy",
    "StreamingFileSink",
]

log = logging.getLogger(__name__)

_MAX_REMEMBERED_CHECKPOINTS = 64
"""Prepared committables of at most this many checkpoints are remembered without pruning."""


class OutputFileConfig:
    """Prefix and suffix of part file names (``part`` and ``""`` by default)."""

    def __init__(self, part_prefix: str = "part", part_suffix: str = "") -> None:
        self._prefix = part_prefix
        self._suffix = part_suffix

    @staticmethod
    def builder() -> OutputFileConfig.OutputFileConfigBuilder:
        return OutputFileConfig.OutputFileConfigBuilder()

    def get_part_prefix(self) -> str:
        return self._prefix

    def get_part_suffix(self) -> str:
        return self._suffix

    class OutputFileConfigBuilder:
        def __init__(self) -> None:
            self._prefix = "part"
            self._suffix = ""

        def with_part_prefix(self, prefix: str) -> OutputFileConfig.OutputFileConfigBuilder:
            self._prefix = prefix
            return self

        def with_part_suffix(self, suffix: str) -> OutputFileConfig.OutputFileConfigBuilder:
            self._suffix = suffix
            return self

        def build(self) -> OutputFileConfig:
            return OutputFileConfig(self._prefix, self._suffix)


class RollingPolicy:
    """When an in-progress part file is closed and a new one started."""

    def should_roll_on_event(self, size: int) -> bool:
        return False

    def should_roll_on_processing_time(self, now_ms: int, created_ms: int, last_update_ms: int) -> bool:
        return False

    def should_roll_on_checkpoint(self, size: int) -> bool:
        return True

    @staticmethod
    def default_rolling_policy(
        part_size: int = 1024 * 1024 * 128,
        rollover_interval: int = 60 * 1000,
        inactivity_interval: int = 60 * 1000,
    ) -> DefaultRollingPolicy:
        """Roll when a file exceeds ``part_size`` bytes, is older than ``rollover_interval`` ms,
        or has not been written for ``inactivity_interval`` ms."""
        return DefaultRollingPolicy(part_size, rollover_interval, inactivity_interval)

    @staticmethod
    def on_checkpoint_rolling_policy() -> OnCheckpointRollingPolicy:
        return OnCheckpointRollingPolicy()


class DefaultRollingPolicy(RollingPolicy):
    def __init__(self, part_size: int, rollover_interval: int, inactivity_interval: int) -> None:
        if part_size <= 0 or rollover_interval <= 0 or inactivity_interval <= 0:
            raise ValueError("rolling policy sizes and intervals must be positive")
        self.part_size = part_size
        self.rollover_interval = rollover_interval
        self.inactivity_interval = inactivity_interval

    def should_roll_on_event(self, size: int) -> bool:
        return size > self.part_size

    def should_roll_on_processing_time(self, now_ms: int, created_ms: int, last_update_ms: int) -> bool:
        return (
            now_ms - created_ms >= self.rollover_interval
            or now_ms - last_update_ms >= self.inactivity_interval
        )

    def should_roll_on_checkpoint(self, size: int) -> bool:
        return size > self.part_size


class OnCheckpointRollingPolicy(RollingPolicy):
    """Roll only on checkpoints (``SinkWriter.on_checkpoint``) and at end of input."""


class BucketAssigner:
    """Chooses the bucket (sub-directory) of the records written at a point in time."""

    def __init__(self, format_str: str | None = None, timezone_id: str | None = None) -> None:
        self.format_str = format_str
        self.timezone_id = timezone_id
        if format_str is not None:
            _compile_java_datetime_pattern(format_str)  # fail early on unsupported patterns

    @staticmethod
    def base_path_bucket_assigner() -> BucketAssigner:
        """Write every part file directly into the base path."""
        return BucketAssigner(None)

    @staticmethod
    def date_time_bucket_assigner(
        format_str: str = "yyyy-MM-dd--HH", timezone_id: str | None = None
    ) -> BucketAssigner:
        """Bucket by the processing time formatted with a Java ``DateTimeFormatter`` pattern."""
        return BucketAssigner(format_str, timezone_id)

    def make_bucket_id_function(self) -> Callable[[float], str]:
        """``epoch seconds -> bucket id`` for this assigner (built once per writer)."""
        if self.format_str is None:
            return _no_bucket
        render = _compile_java_datetime_pattern(self.format_str)
        tz: _dt.tzinfo | None = None
        if self.timezone_id is not None:
            from zoneinfo import ZoneInfo

            tz = ZoneInfo(self.timezone_id)

        def bucket_id(now: float) -> str:
            when = _dt.datetime.fromtimestamp(now, tz) if tz else _dt.datetime.fromtimestamp(now)
            return render(when)

        return bucket_id


class ElementBucketAssigner(BucketAssigner):
    """Records are ``(bucket id, text)`` pairs and each text goes to its own bucket (Flink's
    per-element ``BucketAssigner.getBucketId``): the Table filesystem connector's ``k=v``
    partition directories."""

    def __init__(self) -> None:
        super().__init__(None)


def _no_bucket(_now: float) -> str:
    return ""


def _compile_java_datetime_pattern(pattern: str) -> Callable[[_dt.datetime], str]:
    """A renderer for the common ``DateTimeFormatter`` letters (y M d H h m s S a E, quoted text)."""
    parts: list[Callable[[_dt.datetime], str]] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "'":
            j = pattern.find("'", i + 1)
            if j < 0:
                raise ValueError(f"unterminated quote in date pattern {pattern!r}")
            literal = "'" if j == i + 1 else pattern[i + 1 : j]
            parts.append(_literal(literal))
            i = j + 1
            continue
        if not c.isalpha():
            parts.append(_literal(c))
            i += 1
            continue
        j = i
        while j < n and pattern[j] == c:
            j += 1
        width = j - i
        parts.append(_datetime_field(c, width, pattern))
        i = j
    return lambda d: "".join([p(d) for p in parts])


def _literal(text: str) -> Callable[[_dt.datetime], str]:
    def render(_d: _dt.datetime) -> str:
        return text

    return render


def _datetime_field(letter: str, width: int, pattern: str) -> Callable[[_dt.datetime], str]:
    def padded(get: Callable[[_dt.datetime], int]) -> Callable[[_dt.datetime], str]:
        return lambda d: str(get(d)).zfill(width)

    if letter in "yu":
        if width == 2:
            return lambda d: f"{d.year % 100:02d}"
        return padded(lambda d: d.year)
    if letter in "ML":
        if width == 3:
            return lambda d: d.strftime("%b")
        if width >= 4:
            return lambda d: d.strftime("%B")
        return padded(lambda d: d.month)
    simple: dict[str, Callable[[_dt.datetime], int]] = {
        "d": lambda d: d.day,
        "H": lambda d: d.hour,
        "h": lambda d: (d.hour % 12) or 12,
        "k": lambda d: d.hour or 24,
        "K": lambda d: d.hour % 12,
        "m": lambda d: d.minute,
        "s": lambda d: d.second,
        "D": lambda d: d.timetuple().tm_yday,
    }
    if letter in simple:
        return padded(simple[letter])
    if letter == "S":
        return lambda d: f"{d.microsecond:06d}000"[:width]
    if letter == "a":
        return lambda d: "AM" if d.hour < 12 else "PM"
    if letter == "E":
        return (lambda d: d.strftime("%A")) if width >= 4 else (lambda d: d.strftime("%a"))
    raise ValueError(f"unsupported letter {letter!r} in date pattern {pattern!r}")


class FileCompactStrategy:
    """Small-file compaction settings (recorded; compaction itself is not implemented)."""

    def __init__(self, checkpoints: int = 1, size_threshold: int = -1, threads: int = 1) -> None:
        self.checkpoints = checkpoints
        self.size_threshold = size_threshold
        self.threads = threads

    @staticmethod
    def builder() -> FileCompactStrategy.Builder:
        return FileCompactStrategy.Builder()

    class Builder:
        def __init__(self) -> None:
            self._strategy = FileCompactStrategy()

        def enable_compaction_on_checkpoint(
            self, num_checkpoints_before_compaction: int
        ) -> FileCompactStrategy.Builder:
            self._strategy.checkpoints = num_checkpoints_before_compaction
            return self

        def set_size_threshold(self, size_threshold: int) -> FileCompactStrategy.Builder:
            self._strategy.size_threshold = size_threshold
            return self

        def set_num_compact_threads(self, num_compact_threads: int) -> FileCompactStrategy.Builder:
            self._strategy.threads = num_compact_threads
            return self

        def build(self) -> FileCompactStrategy:
            return self._strategy


class FileCompactor:
    """How compacted files are produced (recorded; compaction itself is not implemented)."""

    def __init__(self, kind: str, file_delimiter: bytes | None = None) -> None:
        self.kind = kind
        self.file_delimiter = file_delimiter

    @staticmethod
    def concat_file_compactor(file_delimiter: bytes | None = None) -> FileCompactor:
        return FileCompactor("concat", file_delimiter)

    @staticmethod
    def identical_file_compactor() -> FileCompactor:
        return FileCompactor("identical")


# --- the writer ------------------------------------------------------------------------------


class _Storage:
    """The few file operations the writer needs, direct for local paths, fsspec otherwise."""

    def __init__(self, base_path: str) -> None:
        fs, root = fsspec.core.url_to_fs(base_path)
        protocol = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
        self.local = "file" in protocol
        self.fs = fs
        self.root = os.path.abspath(root) if self.local else root.rstrip("/")

    def join(self, *parts: str) -> str:
        parts = tuple(p for p in parts if p)
        if self.local:
            return os.path.join(self.root, *parts)
        return "/".join((self.root, *parts))

    def child(self, directory: str, name: str) -> str:
        return os.path.join(directory, name) if self.local else f"{directory}/{name}"

    def makedirs(self, path: str) -> None:
        if self.local:
            os.makedirs(path, exist_ok=True)
        else:
            self.fs.makedirs(path, exist_ok=True)

    def open_write(self, path: str) -> BinaryIO:
        if self.local:
            return open(path, "wb", buffering=1024 * 1024)
        return self.fs.open(path, "wb")  # type: ignore[no-any-return]

    def rename(self, src: str, dst: str) -> None:
        if self.local:
            os.replace(src, dst)
        else:
            self.fs.mv(src, dst)

    def exists(self, path: str) -> bool:
        if self.local:
            return os.path.exists(path)
        return bool(self.fs.exists(path))

    def list_names(self, directory: str) -> list[str]:
        if self.local:
            return os.listdir(directory)
        return [posixpath.basename(p.rstrip("/")) for p in self.fs.ls(directory, detail=False)]

    def close_durable(self, handle: BinaryIO) -> None:
        """Close a part file so that its bytes survive a crash of the machine (Flink syncs too)."""
        if self.local:
            handle.flush()
            os.fsync(handle.fileno())
        handle.close()


def _commit_files(storage: _Storage, committables: list[Any]) -> list[str]:
    """Rename ``(in-progress, final)`` pairs; idempotent. Returns the final paths renamed now."""
    renamed: list[str] = []
    for committable in committables:
        try:
            in_progress, final = committable
        except (TypeError, ValueError):
            raise ValueError(
                f"not a FileSink committable (in-progress path, final path): {committable!r}"
            ) from None
        if storage.exists(in_progress):
            storage.rename(in_progress, final)
            renamed.append(final)
        elif not storage.exists(final):
            log.warning("FileSink: cannot commit %s: neither it nor %s exists", final, in_progress)
        # else: committed before (a commit repeated after a restore)
    return renamed


class _PartFile:
    __slots__ = ("created_ms", "final_path", "handle", "in_progress_path", "last_update_ms", "size")

    def __init__(self, final_path: str, in_progress_path: str, handle: BinaryIO, now_ms: int) -> None:
        self.final_path = final_path
        self.in_progress_path = in_progress_path
        self.handle = handle
        self.size = 0
        self.created_ms = now_ms
        self.last_update_ms = now_ms


class _Bucket:
    __slots__ = ("directory", "part", "part_counter", "unique_id")

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.unique_id = str(uuid.uuid4())
        self.part_counter = 0
        self.part: _PartFile | None = None


class _FileSinkWriter:
    """Writes part files; non-transactional by default (rolls are renamed to final names at once)."""

    def __init__(self, sink: FileSink, subtask_index: int, input_type: TypeInformation | None) -> None:
        self._storage = _Storage(sink.base_path)
        self._config = sink.output_file_config
        self._policy = sink.rolling_policy
        self._bucket_id = sink.bucket_assigner.make_bucket_id_function()
        self._check_interval_ms = sink.bucket_check_interval
        self._legacy_names = sink.legacy_part_names
        self._subtask = subtask_index
        self._codec = sink.encoder.codec
        self._by_element = isinstance(sink.bucket_assigner, ElementBucketAssigner)
        self._fmt = str if self._by_element else make_formatter(input_type)  # texts of the pairs
        self._buckets: dict[str, _Bucket] = {}
        self._last_check_ms = _now_ms()
        self.committed_files: list[str] = []
        # Transactional mode (checkpointing): rolled files wait in ``_pending`` until prepare_commit
        # hands them out; ``_prepared`` remembers what was handed out per checkpoint for end of input.
        self._transactional = False
        self._pending: list[tuple[str, str]] = []
        self._prepared: dict[int, list[tuple[str, str]]] = {}

    # part files -------------------------------------------------------------------------

    def _bucket(self, bucket_id: str) -> _Bucket:
        bucket = self._buckets.get(bucket_id)
        if bucket is None:
            directory = self._storage.join(bucket_id)
            self._storage.makedirs(directory)
            bucket = _Bucket(directory)
            if self._legacy_names and self._transactional:
                bucket.part_counter = self._next_legacy_counter(directory)
            self._buckets[bucket_id] = bucket
        return bucket

    def _next_legacy_counter(self, directory: str) -> int:
        """First free ``n`` of ``part-<subtask>-<n>`` in ``directory``, counting hidden files too.

        Legacy names carry no uuid, so a writer of a restarted attempt must not reuse the name of a
        file that an earlier attempt committed or may still commit (Flink keeps the counter in state)."""
        cfg = self._config
        pattern = re.compile(
            rf"\.?{re.escape(cfg.get_part_prefix())}-{self._subtask}-(\d+){re.escape(cfg.get_part_suffix())}"
            r"(?:\.inprogress\..*)?"
        )
        counters = [
            int(m.group(1)) for n in self._storage.list_names(directory) if (m := pattern.fullmatch(n))
        ]
        return max(counters) + 1 if counters else 0

    def _open_part(self, bucket: _Bucket, now_ms: int) -> _PartFile:
        counter = bucket.part_counter
        bucket.part_counter += 1
        cfg = self._config
        if self._legacy_names:  # StreamingFileSink: part-<subtask>-<counter>
            name = f"{cfg.get_part_prefix()}-{self._subtask}-{counter}{cfg.get_part_suffix()}"
        else:
            name = f"{cfg.get_part_prefix()}-{bucket.unique_id}-{counter}{cfg.get_part_suffix()}"
        final_path = self._storage.child(bucket.directory, name)
        in_progress = self._storage.child(bucket.directory, f".{name}.inprogress.{uuid.uuid4()}")
        part = _PartFile(final_path, in_progress, self._storage.open_write(in_progress), now_ms)
        bucket.part = part
        return part

    def _roll(self, bucket: _Bucket) -> None:
        """Close the bucket's part file: finalise it, or in transactional mode keep it pending."""
        part = bucket.part
        if part is None:
            return
        bucket.part = None
        if self._transactional:
            self._storage.close_durable(part.handle)
            self._pending.append((part.in_progress_path, part.final_path))
            return
        part.handle.close()
        self._storage.rename(part.in_progress_path, part.final_path)
        self.committed_files.append(part.final_path)

    # SinkWriter -------------------------------------------------------------------------

    def write_batch(self, records: list[Any]) -> None:
        if not records:
            return
        now_ms = _now_ms()
        self._maybe_roll_on_time(now_ms)
        if self._by_element:
            groups: dict[str, list[str]] = {}
            for bucket_id, text in records:
                groups.setdefault(bucket_id, []).append(text)
            for bucket_id, lines in groups.items():
                self._write_to(self._bucket(bucket_id), lines, now_ms)
            return
        self._write_to(self._bucket(self._bucket_id(now_ms / 1000.0)), records, now_ms)

    def _write_to(self, bucket: _Bucket, records: list[Any], now_ms: int) -> None:
        data = format_lines(records, self._fmt).encode(self._codec)
        part = bucket.part
        if part is None:
            part = self._open_part(bucket, now_ms)
        if part.size + len(data) - 1 <= _max_size_without_roll(self._policy):
            part.handle.write(data)
            part.size += len(data)
            part.last_update_ms = now_ms
            return
        self._write_with_size_rolling(bucket, records, now_ms)

    def _write_with_size_rolling(self, bucket: _Bucket, records: list[Any], now_ms: int) -> None:
        """Slow path near a size boundary: Flink rolls *before* a record once size > part_size."""
        fmt, codec, policy = self._fmt, self._codec, self._policy
        group: list[bytes] = []
        part = bucket.part
        assert part is not None
        size = part.size
        for r in records:
            if size > 0 and policy.should_roll_on_event(size):
                part.handle.write(b"".join(group))
                part.size = size
                group = []
                self._roll(bucket)
                part = self._open_part(bucket, now_ms)
                size = 0
            line = (fmt(r) + "\n").encode(codec)
            group.append(line)
            size += len(line)
        part.handle.write(b"".join(group))
        part.size = size
        part.last_update_ms = now_ms

    def _maybe_roll_on_time(self, now_ms: int) -> None:
        if now_ms - self._last_check_ms < self._check_interval_ms:
            return
        self._last_check_ms = now_ms
        for bucket in list(self._buckets.values()):
            part = bucket.part
            if part is not None and self._policy.should_roll_on_processing_time(
                now_ms, part.created_ms, part.last_update_ms
            ):
                self._roll(bucket)

    def flush(self, end_of_input: bool) -> None:
        if end_of_input:
            # Finalise everything written, in transactional mode too (there is no later checkpoint
            # to wait for); committables whose commit the runtime already did are skipped.
            for bucket in self._buckets.values():
                self._roll(bucket)
            if self._prepared or self._pending:  # only ever non-empty with two-phase commit
                committables = [c for cs in self._prepared.values() for c in cs] + self._pending
                self._prepared.clear()
                self._pending = []
                self.committed_files.extend(_commit_files(self._storage, committables))
            return
        for bucket in self._buckets.values():
            if bucket.part is not None:
                bucket.part.handle.flush()
        self._maybe_roll_on_time(_now_ms())

    def on_checkpoint(self, checkpoint_id: int) -> None:
        """Roll the part files the policy wants rolled on a checkpoint (all, for OnCheckpoint).

        Not needed in transactional mode, where :meth:`prepare_commit` rolls every file."""
        for bucket in self._buckets.values():
            part = bucket.part
            if part is not None and self._policy.should_roll_on_checkpoint(part.size):
                self._roll(bucket)

    # two-phase commit ---------------------------------------------------------------------

    def set_transactional(self, enabled: bool = True) -> None:
        """Checkpointing is on: rolled part files stay hidden (pending) until committed.

        Must be called before the first ``write_batch``; raises RuntimeError afterwards."""
        if self._buckets:
            raise RuntimeError("FileSink writer: set_transactional must be called before the first write")
        self._transactional = bool(enabled)

    def is_transactional(self) -> bool:
        return self._transactional

    def prepare_commit(self, checkpoint_id: int) -> list[tuple[str, str]]:
        """Close every in-progress part file (a roll on *every* checkpoint, whatever the rolling
        policy: what Flink's bulk formats do) and return ``(in-progress path, final path)`` of
        every file closed since the previous call: the files rolled by the policy meanwhile
        (pending, in transactional mode) and those closed now. The bytes are durable (fsync'd for
        local files); ``FileSink.commit`` of the returned pairs makes exactly the records written
        before this call visible. Records written after it go to new part files.

        Without :meth:`set_transactional`, files the policy rolled were already made visible and
        only the files closed now are returned (at-least-once)."""
        for bucket in self._buckets.values():
            part = bucket.part
            if part is None:
                continue
            bucket.part = None
            self._storage.close_durable(part.handle)
            self._pending.append((part.in_progress_path, part.final_path))
        committables, self._pending = self._pending, []
        if committables:
            self._prepared.setdefault(checkpoint_id, []).extend(committables)
            if len(self._prepared) > _MAX_REMEMBERED_CHECKPOINTS:
                self._forget_committed()
        return list(committables)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """The committables of checkpoints <= ``checkpoint_id`` were committed by the runtime:
        end of input need not commit them again (optional; only bounds what the writer remembers)."""
        for cid in [c for c in self._prepared if c <= checkpoint_id]:
            del self._prepared[cid]

    def _forget_committed(self) -> None:
        """Without notifications, drop remembered committables of old checkpoints once committed."""
        old = sorted(self._prepared)[: len(self._prepared) - _MAX_REMEMBERED_CHECKPOINTS]
        for cid in old:
            if not any(self._storage.exists(in_progress) for in_progress, _ in self._prepared[cid]):
                del self._prepared[cid]

    def close(self) -> None:
        # Without end of input (cancel/failure) the in-progress and pending files stay hidden,
        # as in Flink: only a commit (or a later attempt's commit after restore) reveals them.
        for bucket in self._buckets.values():
            if bucket.part is not None:
                bucket.part.handle.close()
                bucket.part = None
        self._pending = []
        self._prepared.clear()


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _max_size_without_roll(policy: RollingPolicy) -> float:
    """Largest file size at which no record of a batch can trigger a size roll."""
    part_size = getattr(policy, "part_size", None)
    return float("inf") if part_size is None else float(part_size)


class FileSink(Sink):
    """A sink writing records into bucketed part files (build with :meth:`for_row_format`)."""

    def __init__(
        self,
        base_path: str,
        encoder: Encoder,
        output_file_config: OutputFileConfig | None = None,
        rolling_policy: RollingPolicy | None = None,
        bucket_assigner: BucketAssigner | None = None,
        bucket_check_interval: int = 60_000,
        legacy_part_names: bool = False,
    ) -> None:
        self.base_path = str(base_path)
        self.encoder = encoder
        self.output_file_config = output_file_config or OutputFileConfig()
        self.rolling_policy = rolling_policy or RollingPolicy.default_rolling_policy()
        self.bucket_assigner = bucket_assigner or BucketAssigner.date_time_bucket_assigner()
        self.bucket_check_interval = bucket_check_interval
        self.legacy_part_names = legacy_part_names

    @staticmethod
    def for_row_format(base_path: str, encoder: Encoder) -> FileSink.RowFormatBuilder:
        return FileSink.RowFormatBuilder(base_path, encoder)

    @staticmethod
    def for_bulk_format(base_path: str, writer_factory: Any) -> Any:
        raise NotImplementedError(
            "bulk formats (FileSink.for_bulk_format: Parquet, ORC, Avro) are not supported"
        )

    def get_transformer(self) -> None:
        return None

    def create_writer(
        self, subtask_index: int, parallelism: int, input_type: object | None
    ) -> TwoPhaseCommittingSinkWriter:
        type_info = input_type if isinstance(input_type, TypeInformation) else None
        return _FileSinkWriter(self, subtask_index, type_info)

    def commit(self, committables: list[Any]) -> None:
        """Make the part files of ``committables`` (from ``prepare_commit``) visible: rename each
        in-progress file to its final name. Idempotent: a pair whose in-progress file is gone but
        whose final file exists was committed before and is skipped; if neither exists, a warning
        is logged and the pair skipped. Runs wherever the runtime calls it (a TaskExecutor)."""
        if committables:
            _commit_files(_Storage(self.base_path), committables)

    class BaseBuilder:
        def __init__(self, base_path: str, encoder: Encoder) -> None:
            self._base_path = base_path
            self._encoder = encoder
            self._output_file_config = OutputFileConfig()
            self._rolling_policy: RollingPolicy = RollingPolicy.default_rolling_policy()
            self._bucket_assigner = BucketAssigner.date_time_bucket_assigner()
            self._bucket_check_interval = 60_000

        def with_bucket_check_interval(self, interval: int) -> Any:
            """How often (ms) time-based rolling is checked."""
            self._bucket_check_interval = interval
            return self

        def with_bucket_assigner(self, bucket_assigner: BucketAssigner) -> Any:
            self._bucket_assigner = bucket_assigner
            return self

        def with_output_file_config(self, output_file_config: OutputFileConfig) -> Any:
            self._output_file_config = output_file_config
            return self

        def with_rolling_policy(self, rolling_policy: RollingPolicy) -> Any:
            self._rolling_policy = rolling_policy
            return self

        def enable_compact(self, strategy: FileCompactStrategy, compactor: FileCompactor) -> Any:
            raise NotImplementedError("file compaction (FileSink enable_compact) is not supported")

        def disable_compact(self) -> Any:
            return self

        def build(self) -> FileSink:
            return FileSink(
                self._base_path,
                self._encoder,
                self._output_file_config,
                self._rolling_policy,
                self._bucket_assigner,
                self._bucket_check_interval,
            )

    class RowFormatBuilder(BaseBuilder):
        """Builder of a row-format FileSink."""


class StreamingFileSink(FileSink):
    """The legacy SinkFunction-style file sink (``ds.add_sink``); part files are ``part-<subtask>-<n>``."""

    @staticmethod
    def for_row_format(base_path: str, encoder: Encoder) -> StreamingFileSink.DefaultRowFormatBuilder:  # type: ignore[override]
        return StreamingFileSink.DefaultRowFormatBuilder(base_path, encoder)

    class BaseBuilder(FileSink.BaseBuilder):
        def with_rolling_policy(self, policy: RollingPolicy) -> Any:  # PyFlink's argument name here
            return super().with_rolling_policy(policy)

    class DefaultRowFormatBuilder(BaseBuilder):
        def build(self) -> StreamingFileSink:
            return StreamingFileSink(
                self._base_path,
                self._encoder,
                self._output_file_config,
                self._rolling_policy,
                self._bucket_assigner,
                self._bucket_check_interval,
                legacy_part_names=True,
            )
