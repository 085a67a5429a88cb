"""Files that came with a job submission (the job's Python files, archives, jars).

The REST endpoint stores uploaded files on the JobManager's disk and hands the
Dispatcher these records, not the bytes: the JobManager never loads user code,
and a later piece (the BlobServer) ships the files to TaskExecutors from here.
"""

from __future__ import annotations

from typing import Literal

import msgspec

ArtifactKind = Literal["artifact", "jar"]


class JobArtifact(msgspec.Struct, frozen=True, kw_only=True):
    """One uploaded file.

    ``entry_name`` is the name the job asked for (Flink's
    ``DistributedCacheFile.entryName``; the file name for jars), ``path``
    where the JobManager stored it, ``sha256`` its content address.
    """

    entry_name: str
    path: str
    size: int
    sha256: str
    kind: ArtifactKind = "artifact"
