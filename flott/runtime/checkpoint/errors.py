"""Typed errors of checkpoints, savepoints and restore (all within flott's one error tree)."""

from __future__ import annotations

from flott.errors import FlottError, IllegalStateTransitionError


class CheckpointError(FlottError):
    """Something about a checkpoint or savepoint."""


class IllegalCheckpointTransitionError(IllegalStateTransitionError):
    """The CheckpointCoordinator was asked for a move its state does not allow
    (an ack from a task outside the checkpoint's plan, an ack for a checkpoint id never issued,
    a trigger after shutdown, ...)."""


class CheckpointTriggerError(CheckpointError):
    """A checkpoint or savepoint could not be triggered (job not running, coordinator shut down)."""

    http_status = 409


class CheckpointFailureLimitExceededError(CheckpointError):
    """More consecutive checkpoints failed than ``execution.checkpointing.tolerable-failed-checkpoints``."""


class SnapshotFormatError(CheckpointError):
    """A checkpoint/savepoint directory cannot be read: missing or corrupt ``_metadata`` or state file,
    unknown format version. Restore must refuse to start the job with this error."""

    http_status = 400


class RestoreError(CheckpointError):
    """A snapshot cannot be restored the way asked (parallelism above max parallelism, ...)."""

    http_status = 400


class IllegalStoragePathError(CheckpointError):
    """A checkpoint/savepoint path from a client that flott will not touch: a filesystem scheme
    outside ``flott.storage.allowed-schemes`` (``http://``: the JobManager or a TaskExecutor would
    send requests wherever a client points it), a relative path (it would resolve against some
    process's working directory), or a disposal outside the savepoint locations."""

    http_status = 400
