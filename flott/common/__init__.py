"""Common API classes of flott, mirroring ``pyflink.common`` (same names, same behaviour).

``JobClient`` and ``CompletableFuture`` live in modules owned by the client
side; they are resolved lazily (module ``__getattr__``) so importing
``flott.common`` never depends on the client being importable yet.
"""

from __future__ import annotations

from typing import Any

from flott.common.config_options import ConfigOption, ConfigOptions
from flott.common.configuration import Configuration
from flott.common.execution_config import ExecutionConfig
from flott.common.input_dependency_constraint import InputDependencyConstraint
from flott.common.job_execution_result import JobExecutionResult
from flott.common.job_id import JobID
from flott.common.job_status import JobStatus
from flott.common.restart_strategy import RestartStrategies, RestartStrategyConfiguration
from flott.common.serialization import (
    ByteArraySchema,
    DeserializationSchema,
    Encoder,
    SerializationSchema,
    SimpleStringSchema,
)
from flott.common.serializer import TypeSerializer
from flott.common.time import Duration, Instant, Time
from flott.common.typeinfo import TypeInformation, Types, format_record
from flott.common.types import Row, RowKind
from flott.common.watermark_strategy import TimestampAssigner, WatermarkStrategy

__all__ = [
    "ByteArraySchema",
    "CompletableFuture",
    "ConfigOption",
    "ConfigOptions",
    "Configuration",
    "DeserializationSchema",
    "Duration",
    "Encoder",
    "ExecutionConfig",
    "InputDependencyConstraint",
    "Instant",
    "JobClient",
    "JobExecutionResult",
    "JobID",
    "JobStatus",
    "RestartStrategies",
    "RestartStrategyConfiguration",
    "Row",
    "RowKind",
    "SerializationSchema",
    "SimpleStringSchema",
    "Time",
    "TimestampAssigner",
    "TypeInformation",
    "TypeSerializer",
    "Types",
    "WatermarkStrategy",
    "format_record",
]

_LAZY = {
    "JobClient": "flott.common.job_client",
    "CompletableFuture": "flott.common.completable_future",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'flott.common' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value
