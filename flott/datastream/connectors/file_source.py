"""``FileSource`` reading text lines from files and directories, in parallel even for one file.

Splitting. All input files (sorted by path) are laid end to end in one byte
space of ``total`` bytes and subtask ``i`` of ``p`` owns the byte range
``[total*i/p, total*(i+1)/p)``. A subtask emits exactly the lines that *start*
in its range (a line starts at offset 0 of a file or right after a ``\\n``),
reading past its range end to finish its last line and skipping the partial
line at its range start. Every line is therefore read exactly once by exactly
one subtask at any parallelism, and one big file is read by all subtasks.

Speed. Reads are large (4 MiB by default), lines are found with
``bytes.rfind`` and split with one ``str.split("\\n")`` per block; no per-line
I/O or decoding calls.

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
"""

from __future__ import annotations

import codecs
import io
import posixpath
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import fsspec
import xxhash

from flott.common.time import Duration
from flott.datastream.connectors.base import Boundedness, Source, SourceReader

__all__ = [
    "BulkFormat",
    "FileEnumeratorProvider",
    "FileSource",
    "FileSourceBuilder",
    "FileSplitAssignerProvider",
    "StreamFormat",
]

DEFAULT_READ_BUFFER_SIZE = 4 * 1024 * 1024
_MAX_WAIT_S = 0.05


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
    """Split assignment policy; flott assigns byte ranges statically, so this is recorded only."""

    def __init__(self, name: str) -> None:
        self.name = name

    @staticmethod
    def locality_aware_split_assigner() -> FileSplitAssignerProvider:
        return FileSplitAssignerProvider("locality_aware")


@dataclass(frozen=True)
class _FileEntry:
    path: str  # as understood by ``fs``
    size: int


@dataclass(frozen=True)
class _ReadTask:
    """Read the lines starting in ``[start, end)`` of a file (``end=None``: up to EOF)."""

    path: str
    start: int
    end: int | None


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


def _byte_range_tasks(files: list[_FileEntry], subtask: int, parallelism: int) -> list[_ReadTask]:
    """This subtask's share of the concatenated byte space (see module docstring)."""
    total = sum(f.size for f in files)
    lo = total * subtask // parallelism
    hi = total * (subtask + 1) // parallelism
    tasks: list[_ReadTask] = []
    base = 0
    for f in files:
        start, end = max(lo, base), min(hi, base + f.size)
        if start < end:
            tasks.append(_ReadTask(f.path, start - base, end - base))
        base += f.size
    return tasks


def _whole_file_tasks(files: list[_FileEntry], subtask: int, parallelism: int) -> list[_ReadTask]:
    """Whole files, each owned by the subtask whose byte range contains the file's first byte."""
    total = sum(f.size for f in files)
    lo = total * subtask // parallelism
    hi = total * (subtask + 1) // parallelism
    tasks: list[_ReadTask] = []
    base = 0
    for f in files:
        if f.size > 0 and lo <= base < hi:
            tasks.append(_ReadTask(f.path, 0, None))
        base += f.size
    return tasks


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
) -> Iterator[list[str]]:
    """Blocks of lines that start in ``[start, end)`` of the open file ``f``."""
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
            yield decode(buf[:last_nl])
            if final:
                return
            carry = buf[last_nl + 1 :]
            pos += last_nl + 1
            continue
        # The line after the last newline starts at or beyond our end: stop after our last line.
        j = buf.rfind(b"\n", 0, k - 1)  # the newline before our last line start (<= k - 1)
        m = buf.find(b"\n", j + 1)
        yield decode(buf[:m])
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

    def iter_tasks(self, tasks: list[_ReadTask]) -> Iterator[list[str]]:
        for task in tasks:
            f = self._open(task.path)
            self._open_file = f
            try:
                if self._splittable:
                    yield from _iter_range(f, task.start, task.end, self._decode, self._buf_size)
                else:
                    yield from _iter_whole_text(f, self._format.codec, self._buf_size)
            finally:
                self._open_file = None
                f.close()

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

    def _refill(self, blocks: Iterator[list[str]]) -> bool:
        for block in blocks:
            if block:
                self._pending = block
                self._pos = 0
                return True
        return False


class _StaticFileReader(_BatchingReader):
    def __init__(self, source: FileSource, subtask: int, parallelism: int) -> None:
        super().__init__()
        fs, files = _enumerate_files(source.paths)
        splittable = source.splittable and source.stream_format.is_byte_splittable()
        tasks = (_byte_range_tasks if splittable else _whole_file_tasks)(files, subtask, parallelism)
        self._lines = _TaskLines(fs, source.stream_format, source.read_buffer_size)
        self._blocks = self._lines.iter_tasks(tasks)

    def poll_batch(self, max_records: int) -> list[str] | None:
        batch = self._take(max_records)
        if batch is not None:
            return batch
        if not self._refill(self._blocks):
            return None
        return self._take(max_records)

    def close(self) -> None:
        self._lines.close()
        self._blocks = iter(())


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
        self._blocks: Iterator[list[str]] = iter(())

    def _discover(self) -> None:
        fs, files = _enumerate_files(self._source.paths)
        new = [f for f in files if f.path not in self._seen]
        self._seen.update(f.path for f in new)
        mine = [
            _ReadTask(f.path, 0, None)
            for f in new
            if _owner_by_hash(f.path, self._parallelism) == self._subtask
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
        from flott.common.typeinfo import Types

        return Types.STRING()

    def create_reader(self, subtask_index: int, parallelism: int) -> SourceReader:
        if self.discovery_interval is not None:
            interval_s = max(self.discovery_interval.to_millis(), 1) / 1000.0
            return _ContinuousFileReader(self, subtask_index, parallelism, interval_s)
        return _StaticFileReader(self, subtask_index, parallelism)

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
        return self

    def set_read_buffer_size(self, read_buffer_size: int) -> FileSourceBuilder:
        """flott-specific: bytes per read call (default 4 MiB)."""
        if read_buffer_size < 1:
            raise ValueError("read buffer size must be positive")
        self._read_buffer_size = read_buffer_size
        return self

    def build(self) -> FileSource:
        return FileSource(
            self._format, self._paths, self._discovery_interval, self._splittable, self._read_buffer_size
        )
