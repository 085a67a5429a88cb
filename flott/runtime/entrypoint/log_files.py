"""A process's log files as REST serves them: the list of its log directory, one file by name,
its main log and its stdout, each read as its last bytes.

Flink's JobManager serves its own files from the REST endpoint's process; a TaskManager's
are fetched from the TaskExecutor over RPC. Both go through :class:`LogFiles`, which:

* confines names to the log directory: a name is one path segment (no ``/``, ``\\``, NUL,
  ``.`` or ``..``), and the file it names, symlinks resolved, must lie inside the directory
  (a symlink pointing out is treated as missing: Flink's 404 "This file does not exist in
  JobManager log dir.");
* bounds every read to the last ``max_bytes`` (a day's log can be gigabytes; the RPC frame
  and the browser should not carry that), cut at a line start and marked as cut;
* finds stdout where the process's file descriptor 1 points, when that is a regular file
  (``flott cluster start`` sends each process's stdout and stderr to a file in the run
  directory; a process whose stdout is a terminal or a pipe has no stdout file).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import msgspec

from flott.configuration import Configuration
from flott.errors import LogFileNotFoundError, RestRequestError
from flott.runtime.entrypoint import runtime_logging

DEFAULT_MAX_BYTES = 8 * 1024 * 1024
"""A log read over REST returns at most the last 8 MiB of the file."""


class LogFileInfo(msgspec.Struct, frozen=True):
    """One file of a log directory: Flink's ``LogInfo`` (mtime in epoch milliseconds)."""

    name: str
    size: int
    mtime: int


def check_file_name(name: str) -> str:
    """``name`` if it is a plain file name; a 400 for anything that could walk out of a directory."""
    if not name or name in (".", "..") or any(c in name for c in "/\\\0"):
        raise RestRequestError(f"Bad request: {name!r} is not a file name (no paths, no '..').")
    return name


def tail(path: Path, max_bytes: int) -> bytes:
    """The last ``max_bytes`` of the file, from a line start, with a note of what was left out."""
    with path.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size <= max_bytes:
            return f.read()
        f.seek(size - max_bytes)
        data = f.read(max_bytes)
    newline = data.find(b"\n")
    if 0 <= newline < len(data) - 1:
        data = data[newline + 1 :]
    skipped = size - len(data)
    return f"[... the first {skipped} bytes of {path.name} are not shown ...]\n".encode() + data


def stdout_file() -> Path | None:
    """The regular file this process's stdout goes to, if it goes to one."""
    try:
        if not stat.S_ISREG(os.fstat(1).st_mode):
            return None
        return Path(os.readlink("/proc/self/fd/1"))
    except OSError:
        return None


class LogFiles:
    """The log files of this process (see the module docstring); ``where`` names it in errors."""

    def __init__(self, directory: Path, main_log: Path | None, where: str) -> None:
        self.directory = directory
        self.main_log = main_log
        self.where = where

    @classmethod
    def of_this_process(cls, config: Configuration, where: str) -> LogFiles:
        """The directory of the file this process logs to (else ``env.log.dir`` / flott's default)."""
        main = runtime_logging.configured_log_file()
        if config.contains(runtime_logging.ENV_LOG_DIR) and config.get(runtime_logging.ENV_LOG_DIR).strip():
            directory = runtime_logging.log_dir(config)
        elif main is not None:
            directory = main.parent
        else:
            directory = runtime_logging.log_dir(config)
        return cls(directory, main, where)

    def _missing(self, name: str) -> LogFileNotFoundError:
        return LogFileNotFoundError(f"This file does not exist in {self.where} log dir.")

    def list(self) -> list[LogFileInfo]:
        out: list[LogFileInfo] = []
        try:
            entries = sorted(self.directory.iterdir())
        except OSError:
            return out
        for p in entries:
            try:
                inside = self._inside(p)
                st = p.stat()
            except (OSError, LogFileNotFoundError):
                continue
            if stat.S_ISREG(st.st_mode) and inside:
                out.append(LogFileInfo(name=p.name, size=st.st_size, mtime=int(st.st_mtime * 1000)))
        return out

    def _inside(self, path: Path) -> bool:
        root = self.directory.resolve()
        return path.resolve().is_relative_to(root)

    def resolve(self, name: str) -> Path:
        """The file ``name`` of the log directory; 400 for a path, 404 if missing or leading out."""
        path = self.directory / check_file_name(name)
        try:
            if not self._inside(path) or not path.resolve().is_file():
                raise self._missing(name)
        except OSError:
            raise self._missing(name) from None
        return path.resolve()

    def read(self, kind: str, name: str = "", max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
        """``kind``: ``file`` (``name`` in the log directory), ``log`` (the main log) or ``stdout``."""
        if max_bytes <= 0:
            raise RestRequestError(f"Bad request: max_bytes must be positive, got {max_bytes}.")
        if kind == "file":
            path = self.resolve(name)
        elif kind == "log":
            if self.main_log is None or not self.main_log.is_file():
                raise self._missing("log")
            path = self.main_log
        elif kind == "stdout":
            out = stdout_file()
            if out is None or not out.is_file():
                raise LogFileNotFoundError(
                    f"The {self.where} has no stdout file (its stdout is not redirected to a file)."
                )
            path = out
        else:
            raise RestRequestError(f"Bad request: unknown log kind {kind!r} (file, log or stdout).")
        try:
            return tail(path, max_bytes)
        except OSError as e:
            raise LogFileNotFoundError(f"The file {path.name} cannot be read: {e.strerror}.") from None
