"""Typed errors of checkpoints, savepoints and restore.

They are defined in ``flott.errors`` with the rest of the one tree (so every process knows every
class a wire error may name); this module keeps their checkpoint-side import path.
"""

from __future__ import annotations

from flott.errors import (
    CheckpointCancelledError,
    CheckpointError,
    CheckpointFailureLimitExceededError,
    CheckpointTriggerError,
    IllegalCheckpointTransitionError,
    IllegalStoragePathError,
    RestoreError,
    SnapshotFormatError,
)

__all__ = [
    "CheckpointCancelledError",
    "CheckpointError",
    "CheckpointFailureLimitExceededError",
    "CheckpointTriggerError",
    "IllegalCheckpointTransitionError",
    "IllegalStoragePathError",
    "RestoreError",
    "SnapshotFormatError",
]
