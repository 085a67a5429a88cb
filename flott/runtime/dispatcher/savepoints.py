"""The Dispatcher's savepoint chores: checking a savepoint a job is submitted with, disposing one,
and the job graph of a rescaled job.

All of it reads only ``_metadata`` (plain JSON): the JobManager never unpickles state.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from flott.runtime.checkpoint.errors import IllegalStoragePathError, SnapshotFormatError
from flott.runtime.checkpoint.metadata import (
    METADATA_FILE,
    SAVEPOINT_MARKER_FILE,
    CheckpointMetadata,
    check_savepoint_marker,
    checked_state_files,
    load_metadata,
    snapshot_dir_of,
)
from flott.runtime.checkpoint.restore import SnapshotToRestore, restore_assignment
from flott.runtime.checkpoint.storage import (
    CheckpointStorage,
    StoragePathPolicy,
    canonical_location,
    is_under,
)
from flott.runtime.jobgraph import JobGraph
from flott.runtime.jobmaster.checkpointing import ALLOW_NON_RESTORED_STATE_KEY, SAVEPOINT_PATH_KEY


def savepoint_to_restore(storage: CheckpointStorage, job_graph: JobGraph) -> SnapshotToRestore | None:
    """The savepoint the job asks to start from (``execution.savepoint.path``), read and checked.

    Raises :class:`SnapshotFormatError` for a missing or corrupt savepoint and
    :class:`~flott.runtime.checkpoint.errors.RestoreError` when its state cannot go into this job
    (an operator of the savepoint missing from the job without ``allowNonRestoredState``, a
    parallelism above the state's max parallelism): the job is refused, nothing starts.
    """
    path = job_graph.config.get(SAVEPOINT_PATH_KEY, "").strip()
    if not path:
        return None
    allow = job_graph.config.get(ALLOW_NON_RESTORED_STATE_KEY, "false").strip().lower() == "true"
    metadata = load_metadata(storage, path)
    directory = snapshot_dir_of(path)
    parallelism: dict[str, int] = {}
    for v in job_graph.vertices:
        for op in v.operators:
            parallelism[op.operator_id] = v.parallelism
            if op.uid:
                parallelism[op.uid] = v.parallelism
    restore_assignment(metadata, parallelism, directory, allow_non_restored_state=allow)
    return SnapshotToRestore(metadata, directory, allow_non_restored=allow)


def dispose_savepoint(
    storage: CheckpointStorage, path: str, policy: StoragePathPolicy, locations: Iterable[str]
) -> CheckpointMetadata:
    """Delete a savepoint flott wrote, and nothing else (a typo or a hostile request must not delete
    a random tree, nor make the JobManager fetch URLs).

    The path must pass ``policy`` (scheme, absolute); the savepoint must lie under one of
    ``locations`` (the configured savepoint/checkpoint directories and those savepoints were
    written to); its marker must match (:func:`check_savepoint_marker`). Then exactly the files
    its ``_metadata`` names are deleted, and the directories that leaves empty.
    """
    policy.check(path, "savepoint-path")
    directory = snapshot_dir_of(path)
    roots = sorted({canonical_location(r) for r in locations if r})
    if not is_under(directory, roots):
        raise IllegalStoragePathError(
            f"savepoint-path {path!r} is not under a savepoint location of this cluster "
            f"({', '.join(roots) or 'none configured'}; set state.savepoints.dir)"
        )
    metadata = load_metadata(storage, path)
    if not metadata.is_savepoint:
        raise SnapshotFormatError(
            f"{path} is a checkpoint, not a savepoint; checkpoints are removed by the job that owns them"
        )
    check_savepoint_marker(storage, directory, metadata)
    files = checked_state_files(metadata, directory)
    storage.delete_files(directory, [*files, METADATA_FILE, SAVEPOINT_MARKER_FILE])
    return metadata


def rescaled_job_graph(job_graph: JobGraph, parallelism: int, savepoint_path: str) -> JobGraph:
    """The same job at ``parallelism`` (each vertex capped by its max parallelism), from a savepoint."""
    vertices = [
        msgspec.structs.replace(v, parallelism=max(1, min(parallelism, v.max_parallelism)))
        for v in job_graph.vertices
    ]
    config = dict(job_graph.config)
    config[SAVEPOINT_PATH_KEY] = savepoint_path
    return msgspec.structs.replace(job_graph, vertices=vertices, config=config)
