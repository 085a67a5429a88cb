"""Checkpoints and savepoints: the coordinator (JobMaster side), the snapshot format, restore planning.

* :mod:`.coordinator` - CheckpointCoordinator, a pure state machine (events in, actions out).
* :mod:`.metadata` - state handles tasks acknowledge with, and the ``_metadata`` file.
* :mod:`.snapshot` - task side: key-group and operator-state files.
* :mod:`.restore` - ``restore_assignment``: which new subtask reads which files (rescaling).
* :mod:`.storage` - fsspec-backed storage with atomic writes; an in-memory one for tests.
* :mod:`.stats` - statistics in the shape of ``GET /jobs/:id/checkpoints``.
"""

from flott.runtime.checkpoint.coordinator import CheckpointConfig, CheckpointCoordinator, CheckpointPlan
from flott.runtime.checkpoint.errors import (
    CheckpointError,
    CheckpointFailureLimitExceededError,
    CheckpointTriggerError,
    IllegalCheckpointTransitionError,
    RestoreError,
    SnapshotFormatError,
)
from flott.runtime.checkpoint.metadata import FORMAT_VERSION, CheckpointMetadata, load_metadata
from flott.runtime.checkpoint.restore import SubtaskRestore, restore_assignment
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage, MemoryCheckpointStorage

__all__ = [
    "FORMAT_VERSION",
    "CheckpointConfig",
    "CheckpointCoordinator",
    "CheckpointError",
    "CheckpointFailureLimitExceededError",
    "CheckpointMetadata",
    "CheckpointPlan",
    "CheckpointTriggerError",
    "FsspecCheckpointStorage",
    "IllegalCheckpointTransitionError",
    "MemoryCheckpointStorage",
    "RestoreError",
    "SnapshotFormatError",
    "SubtaskRestore",
    "load_metadata",
    "restore_assignment",
]
