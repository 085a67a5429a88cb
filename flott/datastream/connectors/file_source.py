"""``FileSource`` reading text lines from files and directories, in parallel even for one file.

Splitting. All input files (sorted by path) are laid end to end in one byte
space of ``total`` bytes and subtask ``i`` of ``p`` owns the byte range
``[total*i/p, total*(i+1)/p)``. A subtask emits exactly the lines that *start*
in its range (a line starts at offset 0 of a file or right after a ``\\n``),
reading past its range end to finish its last line and skipping the partial
line at its range start. Every line is therefore read exactly once by exactly
one subtask at any parallelism, and one big file is read by all subtasks.

Speed. Reads are large (256 KiB by default: thousands of lines per call, yet small enough to
keep a TaskExecutor lean), lines are found with ``bytes.rfind`` and split with one
``str.split("\\n")`` per block; no per-line I/O or decoding calls.

Lines. Like Flink's ``TextLineInputFormat`` (a ``BufferedReader.readLine``), a
line ends at ``\\n``, ``\\r\\n`` or a lone ``\\r``, the terminator is not part
of the line, a final line without terminator is still a line, and an empty
file has no lines. Undecodable bytes become U+FFFD (Java's decoder does the
same). Charsets in which ``\\n`` is not the single byte 0x0A (UTF-16/32) cannot
be split by bytes: each such file is read whole by one subtask.

Files. Paths may be files or directories (all files below them, recursively,
except hidden ones: names starting with ``.`` or ``_``, Flink's default
filter), local paths or any fsspec URL (``file://``, ``memory://``, ...).
Explicitly named files are read even if their name looks hidden.

Checkpointing (bounded/static file sets). A split is the plain tuple
``(path, start, end, skip)``: the lines that start in the byte range
``[start, end)`` of ``path`` (``end=None``: up to the end of the file), minus
the first ``skip`` of them. A fresh reader's splits are its byte ranges with
``skip=0``. :meth:`_StaticFileReader.snapshot_state` reports the unfinished
splits with ``start`` = the byte offset of the next unread line, which is
always a line start, so a restored reader continues exactly there (the
partial-line skip at a range start is a no-op at a line start). ``skip`` is 0
except in two cases where a byte offset cannot name the next line: the next
line follows a lone ``\\r`` inside a ``\\n``-terminated segment (then ``start``
is that segment's start and ``skip`` counts the lines of the segment already
emitted), and charsets that are not byte-splittable (UTF-16/32: ``(path, 0,
None, lines already emitted)``). The offsets are computed only when a snapshot
is taken; reading keeps its speed. Continuously monitored sources
(``monitor_continuously``) do not snapshot: which files were already seen is
global knowledge that cannot be split over subtasks; they re-read their files
after a restore.
"""

from __future__ import annotations

import codecs
import io
import logging
import posixpath
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import fsspec
import xxhash

from flott.common.time import Duration
from flott.common.typeinfo import Types
from flott.datastream.connectors.base import Boundedness, Source, SourceReader

__all__ = [
    "BulkFormat",
    "FileEnumeratorProvider",
    "FileSource",
    "FileSourceBuilder",
    "FileSplitAssignerProvider",
    "StreamFormat",
]

DEFAULT_READ_BUFFER_SIZE = 256 * 1024
"""Bytes per read call. A reader holds a block, its carry-over and the block's decoded lines at once
(about 3x the block in memory), so the block sets most of a reading TaskExecutor's working set:
4 MiB blocks made a word-count TaskExecutor peak at 82 MiB, 256 KiB ones at 46 MiB (idle: 39 MiB),
with CPU time within noise (a block of 256 KiB is still thousands of lines per call)."""
_MAX_WAIT_S = 0.05

log = logging.getLogger(__name__)

FileSplit = tuple[str, int, int | None, int]
"""``(path, start, end, skip)``: the lines starting in ``[start, end)`` of ``path`` but the first ``skip``."""

_Block = tuple[list[str], bytes | None, int, int | None]
"""One block of lines with what locates it in its file:

* byte-splittable charsets: ``(lines, raw, base, after)``: ``raw`` are the bytes the lines were
  decoded from (complete ``\\n``-segments, without the last terminator), starting at file offset
  ``base``; ``after`` is the offset of the line after the block, or None if the split ends with it;
* other charsets: ``(lines, None, first, first + len(lines))`` with ``first`` the index of the
  block's first line in the file."""


class StreamFormat:
    """How a file's bytes become records; flott supports Flink's text line format."""

    def __init__(self, charset_name: str = "UTF-8") -> None:
        try:
            self._codec = codecs.lookup(charset_name).name
        except LookupError:
            raise ValueError(f"Unsupported charset: {charset_name}") from None
        self._charset = charset_name

    @staticmethod
    def text_line_format(charset_name: str = "UTF-8") -> StreamFormat:
        """One record per line, decoded with ``charset_name``, line terminator stripped."""
        return StreamFormat(charset_name)

    @property
    def charset(self) -> str:
        return self._charset

    @property
    def codec(self) -> str:
        return self._codec

    def is_byte_splittable(self) -> bool:
        """Whether lines can be found by searching bytes for 0x0A (ASCII-compatible charsets)."""
        try:
            return "\n".encode(self._codec) == b"\n" and "\r".encode(self._codec) == b"\r"
        except (UnicodeError, LookupError):
            return False

    def __repr__(self) -> str:
        return f"StreamFormat.text_line_format({self._charset!r})"


class BulkFormat:
    """Bulk (columnar) formats need Java readers (Parquet, ORC, Avro); not available in flott."""

    def __init__(self, *args: Any) -> None:
        raise NotImplementedError("bulk file formats (FileSource.for_bulk_file_format) are not supported")


class FileEnumeratorProvider:
    """Whether files may be split into byte ranges read by different subtasks."""

    def __init__(self, splittable: bool) -> None:
        self.splittable = splittable

    @staticmethod
    def default_splittable_file_enumerator() -> FileEnumeratorProvider:
        return FileEnumeratorProvider(True)

    @staticmethod
    def default_non_splittable_file_enumerator() -> FileEnumeratorProvider:
        return FileEnumeratorProvider(False)


class FileSplitAssignerProvider:
    """Split assignment policy.

    PyFlink offers one policy, the locality-aware assigner, which is also Flink's default. On one host
    every split is local, so it has nothing to prefer: flott's assignment (each reader takes its share of
    byte ranges) is what it amounts to here. Setting it is therefore the same as not setting it.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    @staticmethod
    def locality_aware_split_assigner() -> FileSplitAssignerProvider:
        return FileSplitAssignerProvider("locality_aware")


@dataclass(frozen=True)
class _FileEntry:
    path: str  # as understood by ``fs``
    size: int


def _is_local(fs: Any) -> bool:
    protocol = fs.protocol
    return "file" in (protocol if isinstance(protocol, tuple) else (protocol,))


def _hidden(relative_path: str) -> bool:
    return any(part.startswith((".", "_")) for part in relative_path.split("/") if part)


def _enumerate_files(paths: list[str]) -> tuple[Any, list[_FileEntry]]:
    """All non-hidden files under ``paths``, sorted by path (same list on every subtask)."""
    fs: Any = None
    entries: dict[str, int] = {}
    for raw in paths:
        this_fs, root = fsspec.core.url_to_fs(raw)
        if fs is None:
            fs = this_fs
        elif type(this_fs) is not type(fs):
            raise ValueError("all FileSource paths must be on the same file system")
        if this_fs.isdir(root):
            found = this_fs.find(root, withdirs=False, detail=True)
            for path, info in found.items():
                if info.get("type", "file") != "file":
                    continue
                rel = posixpath.relpath(path, root) if path != root else ""
                if _hidden(rel):
                    continue
                entries[path] = int(info.get("size") or 0)
        elif this_fs.isfile(root):
            entries[root] = int(this_fs.size(root) or 0)
        else:
            raise FileNotFoundError(f"FileSource input path does not exist: {raw}")
    return fs, [_FileEntry(p, entries[p]) for p in sorted(entries)]


def _byte_range_tasks(files: list[_FileEntry], subtask: int, parallelism: int) -> list[FileSplit]:
    """This subtask's share of the concatenated byte space (see module docstring)."""
    total = sum(f.size for f in files)
    lo = total * subtask // parallelism
    hi = total * (subtask + 1) // parallelism
    tasks: list[FileSplit] = []
    base = 0
    for f in files:
        start, end = max(lo, base), min(hi, base + f.size)
        if start < end:
            tasks.append((f.path, start - base, end - base, 0))
        base += f.size
    return tasks


def _whole_file_tasks(files: list[_FileEntry], subtask: int, parallelism: int) -> list[FileSplit]:
    """Whole files, each owned by the subtask whose byte range contains the file's first byte."""
    total = sum(f.size for f in files)
    lo = total * subtask // parallelism
    hi = total * (subtask + 1) // parallelism
    tasks: list[FileSplit] = []
    base = 0
    for f in files:
        if f.size > 0 and lo <= base < hi:
            tasks.append((f.path, 0, None, 0))
        base += f.size
    return tasks


def _normalize_file_splits(splits: Iterable[Any]) -> list[FileSplit]:
    """Restored splits as tuples (they may come back as lists after msgpack/JSON); rejects junk."""
    out: list[FileSplit] = []
    for split in splits:
        try:
            path, start, end, skip = split
        except (TypeError, ValueError):
            raise ValueError(f"not a FileSource split (path, start, end, skip): {split!r}") from None
        ok = (
            isinstance(path, str)
            and isinstance(start, int)
            and start >= 0
            and (end is None or isinstance(end, int))
            and isinstance(skip, int)
            and skip >= 0
        )
        if not ok:
            raise ValueError(f"not a FileSource split (path, start, end, skip): {split!r}")
        out.append((path, start, end, skip))
    return out


def _locate_line(raw: bytes, index: int) -> tuple[int, int]:
    """Where line ``index`` of the block decoded from ``raw`` starts: ``(offset in raw, skip)``.

    ``offset`` is the start of the ``\\n``-segment holding that line and ``skip`` the number of
    lines of that segment before it (non-zero only after a lone ``\\r``). Called per snapshot,
    never per record."""
    crs = raw.count(b"\r")
    if crs == 0 or crs == raw.count(b"\r\n") + raw.endswith(b"\r"):
        # No lone \r (only \r\n, and the block's last segment may end with its \r): one line
        # per segment, so line ``index`` starts after the index-th newline.
        return len(raw) - len(raw.split(b"\n", index)[-1]), 0
    offset = 0
    remaining = index
    while True:
        nl = raw.find(b"\n", offset)
        seg_end = len(raw) if nl < 0 else nl
        lines = raw.count(b"\r", offset, seg_end) + 1  # _split_cr: split at every \r ...
        if seg_end > offset and raw[seg_end - 1] == 0x0D:
            lines -= 1  # ... except a trailing one (\r\n)
        if remaining < lines or nl < 0:
            return offset, remaining
        remaining -= lines
        offset = nl + 1


def _owner_by_hash(path: str, parallelism: int) -> int:
    """Stable owner of a whole file (continuous mode): the same on every subtask and restart."""
    return xxhash.xxh64_intdigest(path.encode("utf-8")) % parallelism


def _split_cr(lines: list[str]) -> list[str]:
    """Apply ``readLine``'s other terminators: ``\\r\\n`` and a lone ``\\r``."""
    out: list[str] = []
    append = out.append
    for line in lines:
        if "\r" in line:
            if line.endswith("\r"):
                line = line[:-1]
            out.extend(line.split("\r"))
        else:
            append(line)
    return out


class _LineDecoder:
    def __init__(self, codec: str) -> None:
        self._codec = codec

    def __call__(self, block: bytes) -> list[str]:
        """Lines of ``block`` (complete lines joined by ``\\n``, no trailing terminator)."""
        text = block.decode(self._codec, "replace")
        lines = text.split("\n")
        if "\r" in text:
            return _split_cr(lines)
        return lines


def _iter_range(
    f: BinaryIO, start: int, end: int | None, decode: _LineDecoder, buf_size: int
) -> Iterator[_Block]:
    """Blocks of lines that start in ``[start, end)`` of the open file ``f`` (see ``_Block``)."""
    limit = end if end is not None else 1 << 62
    carry = b""
    if start > 0:
        # The line containing byte ``start - 1`` belongs to the previous owner; skip to its end.
        f.seek(start - 1)
        pos = start - 1
        while True:
            block = f.read(buf_size)
            if not block:
                return
            i = block.find(b"\n")
            if i >= 0:
                pos += i + 1
                carry = block[i + 1 :]
                break
            pos += len(block)
        if pos >= limit:
            return
    else:
        f.seek(0)
        pos = 0
    # Invariant: ``carry`` holds the bytes from ``pos`` (a line start < limit) read so far.
    while True:
        block = f.read(buf_size)
        final = not block
        if final:
            if not carry:
                return
            # End of file terminates the last line.
            buf = carry if carry.endswith(b"\n") else carry + b"\n"
        else:
            buf = carry + block if carry else block
        last_nl = buf.rfind(b"\n")
        if last_nl < 0:
            carry = buf
            continue
        k = limit - pos  # lines starting before relative offset k are ours
        if last_nl + 1 < k:
            raw = buf[:last_nl]
            yield decode(raw), raw, pos, None if final else pos + last_nl + 1
            if final:
                return
            carry = buf[last_nl + 1 :]
            pos += last_nl + 1
            continue
        # The line after the last newline starts at or beyond our end: stop after our last line.
        j = buf.rfind(b"\n", 0, k - 1)  # the newline before our last line start (<= k - 1)
        m = buf.find(b"\n", j + 1)
        raw = buf[:m]
        yield decode(raw), raw, pos, None
        return


def _iter_whole_text(f: BinaryIO, codec: str, buf_size: int) -> Iterator[list[str]]:
    """Blocks of lines of a whole file in a charset that cannot be split by bytes (UTF-16...)."""
    text_io = io.TextIOWrapper(f, encoding=codec, errors="replace", newline="")  # type: ignore[arg-type]
    carry = ""
    while True:
        block = text_io.read(buf_size)
        if not block:
            break
        buf = carry + block
        i = buf.rfind("\n")
        if i < 0:
            carry = buf
            continue
        lines = buf[:i].split("\n")
        yield _split_cr(lines) if "\r" in buf[:i] else lines
        carry = buf[i + 1 :]
    if carry:
        yield _split_cr([carry])


class _TaskLines:
    """Iterates the line blocks of a list of read tasks, opening one file at a time."""

    def __init__(self, fs: Any, stream_format: StreamFormat, buf_size: int) -> None:
        self._fs = fs
        self._local = _is_local(fs)
        self._format = stream_format
        self._splittable = stream_format.is_byte_splittable()
        self._decode = _LineDecoder(stream_format.codec)
        self._buf_size = buf_size
        self._open_file: BinaryIO | None = None

    def _open(self, path: str) -> BinaryIO:
        if self._local:
            return open(path, "rb")
        return self._fs.open(path, "rb")  # type: ignore[no-any-return]

    def iter_split(self, split: FileSplit) -> Iterator[_Block]:
        """The blocks of one split (its ``skip`` is applied by the reader)."""
        path, start, end, _skip = split
        f = self._open(path)
        self._open_file = f
        try:
            if self._splittable:
                yield from _iter_range(f, start, end, self._decode, self._buf_size)
            else:
                first = 0
                for lines in _iter_whole_text(f, self._format.codec, self._buf_size):
                    after = first + len(lines)
                    yield lines, None, first, after
                    first = after
        finally:
            self._open_file = None
            f.close()

    def iter_tasks(self, tasks: list[FileSplit]) -> Iterator[_Block]:
        for task in tasks:
            yield from self.iter_split(task)

    def close(self) -> None:
        if self._open_file is not None:
            self._open_file.close()
            self._open_file = None


class _BatchingReader:
    """Turns an iterator of line blocks into ``poll_batch`` slices of at most ``max_records``."""

    def __init__(self) -> None:
        self._pending: list[str] = []
        self._pos = 0

    def _take(self, max_records: int) -> list[str] | None:
        pending, pos = self._pending, self._pos
        if pos >= len(pending):
            return None
        end = pos + max_records
        self._pos = end
        if pos == 0 and end >= len(pending):
            self._pending = []
            self._pos = 0
            return pending
        return pending[pos:end]

    def _refill(self, blocks: Iterator[_Block]) -> bool:
        for block in blocks:
            if block[0]:
                self._pending = block[0]
                self._pos = 0
                return True
        return False


class _StaticFileReader(_BatchingReader):
    """Reads a list of splits in order; knows, per block, where its lines came from (snapshots)."""

    def __init__(self, source: FileSource, fs: Any, splits: list[FileSplit]) -> None:
        super().__init__()
        self._lines = _TaskLines(fs, source.stream_format, source.read_buffer_size)
        self._splits: deque[FileSplit] = deque(splits)
        self._split: FileSplit | None = None  # the split being read
        self._blocks: Iterator[_Block] = iter(())  # ... its remaining blocks
        self._block: _Block | None = None  # the block ``_pending`` holds (None: none read yet)
        self._skip = 0  # lines of the split still to drop

    def poll_batch(self, max_records: int) -> list[str] | None:
        batch = self._take(max_records)
        if batch is not None:
            return batch
        if not self._next_block():
            return None
        return self._take(max_records)

    def _next_block(self) -> bool:
        while True:
            block = next(self._blocks, None)
            if block is None:
                if not self._splits:
                    self._split = None
                    self._block = None
                    return False
                split = self._splits.popleft()
                self._split, self._block, self._skip = split, None, split[3]
                self._blocks = self._lines.iter_split(split)
                continue
            self._block = block
            lines = block[0]
            skip = self._skip
            if skip >= len(lines):  # empty, or dropped whole by a restored skip
                self._skip = skip - len(lines)
                self._pending, self._pos = [], 0
                continue
            self._skip = 0
            self._pending, self._pos = lines, skip
            return True

    def snapshot_state(self, checkpoint_id: int) -> list[FileSplit]:
        """The unfinished splits, the one being read first, starting at the next unread line.

        Lines handed out by ``poll_batch`` before this call are not in them; all others are."""
        out: list[FileSplit] = []
        if self._split is not None:
            position = self._position(self._split)
            if position is not None:
                out.append(position)
        out.extend(self._splits)
        return out

    def _position(self, split: FileSplit) -> FileSplit | None:
        path, start, end, _ = split
        block = self._block
        if block is None:  # nothing of this split read yet
            return (path, start, end, self._skip)
        _lines, raw, base, after = block
        pos = self._pos
        if pos < len(self._pending):  # part of the block is unread: locate line ``pos``
            if raw is None:
                return (path, 0, None, base + pos)
            offset, skip = _locate_line(raw, pos)
            return (path, base + offset, end, skip)
        if after is None:  # the block was the split's last
            return None
        if raw is None:
            return (path, 0, None, after + self._skip)
        return (path, after, end, self._skip)

    def close(self) -> None:
        self._lines.close()
        self._blocks = iter(())
        self._splits.clear()
        self._split = None
        self._block = None
        self._pending, self._pos = [], 0


class _ContinuousFileReader(_BatchingReader):
    """Re-lists the inputs every discovery interval and reads new files (each wholly by one subtask)."""

    def __init__(self, source: FileSource, subtask: int, parallelism: int, interval_s: float) -> None:
        super().__init__()
        self._source = source
        self._subtask = subtask
        self._parallelism = parallelism
        self._interval_s = interval_s
        self._seen: set[str] = set()
        self._next_discovery = 0.0
        self._lines: _TaskLines | None = None
        self._blocks: Iterator[_Block] = iter(())

    def _discover(self) -> None:
        fs, files = _enumerate_files(self._source.paths)
        new = [f for f in files if f.path not in self._seen]
        self._seen.update(f.path for f in new)
        mine: list[FileSplit] = [
            (f.path, 0, None, 0) for f in new if _owner_by_hash(f.path, self._parallelism) == self._subtask
        ]
        if mine:
            self._lines = _TaskLines(fs, self._source.stream_format, self._source.read_buffer_size)
            self._blocks = self._lines.iter_tasks(mine)

    def poll_batch(self, max_records: int) -> list[str] | None:
        batch = self._take(max_records)
        if batch is not None:
            return batch
        if self._refill(self._blocks):
            return self._take(max_records)
        now = time.monotonic()
        if now >= self._next_discovery:
            self._next_discovery = now + self._interval_s
            self._discover()
            if self._refill(self._blocks):
                return self._take(max_records)
        time.sleep(min(_MAX_WAIT_S, max(0.0, self._next_discovery - time.monotonic())))
        return []

    def close(self) -> None:
        if self._lines is not None:
            self._lines.close()
        self._blocks = iter(())


class FileSource(Source):
    """A source of the lines of files (build with :meth:`for_record_stream_format`)."""

    def __init__(
        self,
        stream_format: StreamFormat,
        paths: list[str],
        discovery_interval: Duration | None = None,
        splittable: bool = True,
        read_buffer_size: int = DEFAULT_READ_BUFFER_SIZE,
    ) -> None:
        if not paths:
            raise ValueError("FileSource needs at least one path")
        self.stream_format = stream_format
        self.paths = [str(p) for p in paths]
        self.discovery_interval = discovery_interval
        self.splittable = splittable
        self.read_buffer_size = read_buffer_size

    @staticmethod
    def for_record_stream_format(stream_format: StreamFormat, *paths: str) -> FileSourceBuilder:
        return FileSourceBuilder(stream_format, list(paths))

    @staticmethod
    def for_bulk_file_format(bulk_format: BulkFormat, *paths: str) -> FileSourceBuilder:
        raise NotImplementedError("bulk file formats (FileSource.for_bulk_file_format) are not supported")

    def get_boundedness(self) -> Boundedness:
        if self.discovery_interval is None:
            return Boundedness.BOUNDED
        return Boundedness.CONTINUOUS_UNBOUNDED

    def get_produced_type(self) -> object:
        return Types.STRING()

    def create_reader(self, subtask_index: int, parallelism: int) -> SourceReader:
        if self.discovery_interval is not None:
            interval_s = max(self.discovery_interval.to_millis(), 1) / 1000.0
            return _ContinuousFileReader(self, subtask_index, parallelism, interval_s)
        fs, files = _enumerate_files(self.paths)
        splittable = self.splittable and self.stream_format.is_byte_splittable()
        tasks = (_byte_range_tasks if splittable else _whole_file_tasks)(files, subtask_index, parallelism)
        return _StaticFileReader(self, fs, tasks)

    def restore_reader(self, subtask_index: int, parallelism: int, splits: list[Any]) -> SourceReader:
        """A reader of exactly ``splits`` (``(path, start, end, skip)`` from ``snapshot_state``).

        The files are not listed again: the splits name them. A continuously monitored source
        cannot restore its position (see module docstring) and starts over like a fresh reader."""
        if self.discovery_interval is not None:
            log.warning(
                "FileSource %s monitors its paths continuously and cannot restore a position: "
                "reading them from the start",
                self.paths,
            )
            return self.create_reader(subtask_index, parallelism)
        fs, _root = fsspec.core.url_to_fs(self.paths[0])
        return _StaticFileReader(self, fs, _normalize_file_splits(splits))

    def __repr__(self) -> str:
        return f"FileSource({self.stream_format!r}, {self.paths!r})"


class FileSourceBuilder:
    """Configures a :class:`FileSource` (bounded by default)."""

    def __init__(self, stream_format: StreamFormat, paths: list[str]) -> None:
        self._format = stream_format
        self._paths = paths
        self._discovery_interval: Duration | None = None
        self._splittable = True
        self._read_buffer_size = DEFAULT_READ_BUFFER_SIZE

    def monitor_continuously(self, discovery_interval: Duration) -> FileSourceBuilder:
        """Keep watching the paths; new files are read as they appear (each by one subtask).

        Files are recognised by path: content appended to an already-read file is not read."""
        if discovery_interval.to_millis() <= 0:
            raise ValueError("discovery interval must be positive")
        self._discovery_interval = discovery_interval
        return self

    def process_static_file_set(self) -> FileSourceBuilder:
        """Read the files present now, then end (the default)."""
        self._discovery_interval = None
        return self

    def set_file_enumerator(self, file_enumerator: FileEnumeratorProvider) -> FileSourceBuilder:
        self._splittable = file_enumerator.splittable
        return self

    def set_split_assigner(self, split_assigner: FileSplitAssignerProvider) -> FileSourceBuilder:
        """Accepts PyFlink's only policy, the locality-aware default (see ``FileSplitAssignerProvider``)."""
        locality_aware = isinstance(split_assigner, FileSplitAssignerProvider) and (
            split_assigner.name == "locality_aware"
        )
        if not locality_aware:
            raise TypeError(
                "set_split_assigner takes FileSplitAssignerProvider.locality_aware_split_assigner()"
            )
        return self

    def set_read_buffer_size(self, read_buffer_size: int) -> FileSourceBuilder:
        """flott-specific: bytes per read call (default 256 KiB; see ``DEFAULT_READ_BUFFER_SIZE``)."""
        if read_buffer_size < 1:
            raise ValueError("read buffer size must be positive")
        self._read_buffer_size = read_buffer_size
        return self

    def build(self) -> FileSource:
        return FileSource(
            self._format, self._paths, self._discovery_interval, self._splittable, self._read_buffer_size
        )
