"""``pyflink.datastream.connectors.file_system`` names: FileSource, FileSink and their settings.

The implementations live in :mod:`~flott.datastream.connectors.file_source`
(reading, with byte-range splitting) and
:mod:`~flott.datastream.connectors.file_sink` (bucketed part files); this module
is the import path PyFlink programs use.
"""

from __future__ import annotations

from flott.datastream.connectors.file_sink import (
    BucketAssigner,
    DefaultRollingPolicy,
    FileCompactor,
    FileCompactStrategy,
    FileSink,
    OnCheckpointRollingPolicy,
    OutputFileConfig,
    RollingPolicy,
    StreamingFileSink,
)
from flott.datastream.connectors.file_source import (
    BulkFormat,
    FileEnumeratorProvider,
    FileSource,
    FileSourceBuilder,
    FileSplitAssignerProvider,
    StreamFormat,
)

__all__ = [
    "BucketAssigner",
    "BulkFormat",
    "DefaultRollingPolicy",
    "FileCompactStrategy",
    "FileCompactor",
    "FileEnumeratorProvider",
    "FileSink",
    "FileSource",
    "FileSourceBuilder",
    "FileSplitAssignerProvider",
    "OnCheckpointRollingPolicy",
    "OutputFileConfig",
    "RollingPolicy",
    "StreamFormat",
    "StreamingFileSink",
]
