"""Checkpoint storages (PyFlink's ``pyflink.datastream.checkpoint_storage``).

Plain data: each storage knows the configuration keys that select it, which is
all the environment records. Checkpointing itself comes with a later issue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flott.errors import NotYetSupportedError

STORAGE = "execution.checkpointing.storage"
CHECKPOINT_DIR = "execution.checkpointing.dir"
SAVEPOINT_DIR = "execution.checkpointing.savepoint-dir"
MAX_STATE_SIZE = "execution.checkpointing.jobmanager.max-state-size"
FILE_STATE_SIZE_THRESHOLD = "execution.checkpointing.file-state-size-threshold"
WRITE_BUFFER_SIZE = "execution.checkpointing.write-buffer-size"

DEFAULT_MAX_STATE_SIZE = 5 * 1024 * 1024
DEFAULT_FILE_STATE_SIZE_THRESHOLD = 20 * 1024


class CheckpointStorage:
    """Where checkpoint data goes."""

    def to_configuration(self) -> dict[str, str]:
        raise NotImplementedError


class JobManagerCheckpointStorage(CheckpointStorage):
    """Checkpoints kept in the JobManager's memory (small state, tests)."""

    DEFAULT_MAX_STATE_SIZE = DEFAULT_MAX_STATE_SIZE

    def __init__(self, checkpoint_path: str | None = None, max_state_size: int | None = None) -> None:
        if max_state_size is not None and max_state_size <= 0:
            raise ValueError("max_state_size must be > 0")
        self._checkpoint_path = checkpoint_path
        self._max_state_size = max_state_size or DEFAULT_MAX_STATE_SIZE

    def get_checkpoint_path(self) -> str | None:
        return self._checkpoint_path

    def get_max_state_size(self) -> int:
        return self._max_state_size

    def get_savepoint_path(self) -> str | None:
        return None

    def to_configuration(self) -> dict[str, str]:
        out = {STORAGE: "jobmanager", MAX_STATE_SIZE: str(self._max_state_size)}
        if self._checkpoint_path:
            out[CHECKPOINT_DIR] = self._checkpoint_path
        return out

    def __repr__(self) -> str:
        return f"JobManagerCheckpointStorage({self._checkpoint_path!r})"

    def __str__(self) -> str:
        """Java's text for this storage (``str(storage)`` in PyFlink)."""
        size = self._max_state_size
        return f"JobManagerCheckpointStorage (checkpoints to JobManager) ( maxStateSize: {size})"


class FileSystemCheckpointStorage(CheckpointStorage):
    """Checkpoints written to a file system path (any fsspec URL)."""

    MAX_FILE_STATE_THRESHOLD = 1024 * 1024  # the largest file-state-size threshold Flink accepts

    def __init__(
        self,
        checkpoint_path: str | None = None,
        file_state_size_threshold: int | None = None,
        write_buffer_size: int = -1,
    ) -> None:
        if not checkpoint_path:
            raise ValueError("FileSystemCheckpointStorage needs a checkpoint path")
        self._checkpoint_path = checkpoint_path
        self._file_state_size_threshold = (
            DEFAULT_FILE_STATE_SIZE_THRESHOLD
            if file_state_size_threshold is None
            else file_state_size_threshold
        )
        self._write_buffer_size = write_buffer_size

    def get_checkpoint_path(self) -> str:
        return self._checkpoint_path

    def get_savepoint_path(self) -> str | None:
        return None

    def get_min_file_size_threshold(self) -> int:
        return self._file_state_size_threshold

    def get_write_buffer_size(self) -> int:
        return self._write_buffer_size

    def to_configuration(self) -> dict[str, str]:
        out = {
            STORAGE: "filesystem",
            CHECKPOINT_DIR: self._checkpoint_path,
            FILE_STATE_SIZE_THRESHOLD: str(self._file_state_size_threshold),
        }
        if self._write_buffer_size >= 0:
            out[WRITE_BUFFER_SIZE] = str(self._write_buffer_size)
        return out

    def __repr__(self) -> str:
        return f"FileSystemCheckpointStorage({self._checkpoint_path!r})"


class CustomCheckpointStorage(CheckpointStorage):
    """PyFlink wraps a Java storage here; flott has no JVM."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotYetSupportedError("custom (Java) checkpoint storages are not supported by flott")


def checkpoint_storage_from_configuration(config: Mapping[str, str]) -> CheckpointStorage | None:
    """The storage the configuration selects, or None when none was chosen."""
    kind = config.get(STORAGE)
    path = config.get(CHECKPOINT_DIR)
    if kind == "jobmanager":
        return JobManagerCheckpointStorage(path, int(config.get(MAX_STATE_SIZE, DEFAULT_MAX_STATE_SIZE)))
    if kind == "filesystem" or (kind is None and path):
        return FileSystemCheckpointStorage(
            path, int(config.get(FILE_STATE_SIZE_THRESHOLD, DEFAULT_FILE_STATE_SIZE_THRESHOLD))
        )
    return None
