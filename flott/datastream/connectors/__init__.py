"""Connectors (sources and sinks), mirroring ``pyflink.datastream.connectors``.

``Source``, ``Sink`` and ``DeliveryGuarantee`` are defined in :mod:`.base` (the
runtime contract); the concrete connectors are importable from here too, as
PyFlink installs them, but resolved lazily so importing the package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

from flott.datastream.connectors.base import (
    Boundedness,
    DeliveryGuarantee,
    Sink,
    SinkWriter,
    Source,
    SourceReader,
)

__all__ = [
    "Boundedness",
    "BucketAssigner",
    "CollectionSource",
    "DataGeneratorSource",
    "DeliveryGuarantee",
    "FileEnumeratorProvider",
    "FileSink",
    "FileSource",
    "FileSourceBuilder",
    "FileSplitAssignerProvider",
    "FlinkKafkaConsumer",
    "FlinkKafkaProducer",
    "KafkaSource",
    "NumberSequenceSource",
    "OutputFileConfig",
    "PrintSink",
    "RollingPolicy",
    "Semantic",
    "Sink",
    "SinkWriter",
    "Source",
    "SourceReader",
    "StreamFormat",
    "StreamingFileSink",
]

_LAZY = {
    "NumberSequenceSource": "number_seq",
    "DataGeneratorSource": "datagen",
    "CollectionSource": "collection",
    "PrintSink": "print_sink",
    "BucketAssigner": "file_system",
    "FileEnumeratorProvider": "file_system",
    "FileSink": "file_system",
    "FileSource": "file_system",
    "FileSourceBuilder": "file_system",
    "FileSplitAssignerProvider": "file_system",
    "OutputFileConfig": "file_system",
    "RollingPolicy": "file_system",
    "StreamFormat": "file_system",
    "StreamingFileSink": "file_system",
    "KafkaSource": "kafka",
    "FlinkKafkaConsumer": "kafka",
    "FlinkKafkaProducer": "kafka",
    "Semantic": "kafka",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
