"""flott's DataStream API: PyFlink's ``pyflink.datastream`` under ``flott.datastream``.

A PyFlink program runs on flott after replacing the import prefix ``pyflink``
with ``flott``: same module paths, class names, methods and arguments.
"""

from __future__ import annotations

import importlib
from typing import Any

from flott.datastream.async_data_stream import AsyncDataStream
from flott.datastream.checkpoint_config import CheckpointConfig, ExternalizedCheckpointRetention
from flott.datastream.checkpoint_storage import (
    CheckpointStorage,
    CustomCheckpointStorage,
    FileSystemCheckpointStorage,
    JobManagerCheckpointStorage,
)
from flott.datastream.checkpointing_mode import CheckpointingMode
from flott.datastream.data_stream import (
    AllWindowedStream,
    BroadcastConnectedStream,
    BroadcastStream,
    CachedDataStream,
    ConnectedStreams,
    DataStream,
    DataStreamSink,
    KeyedStream,
    WindowedStream,
)
from flott.datastream.execution_mode import RuntimeExecutionMode
from flott.datastream.functions import (
    AggregateFunction,
    AllWindowFunction,
    AsyncFunction,
    AsyncRetryPredicate,
    AsyncRetryStrategy,
    BroadcastProcessFunction,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    FilterFunction,
    FlatMapFunction,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    Partitioner,
    ProcessAllWindowFunction,
    ProcessFunction,
    ProcessWindowFunction,
    ReduceFunction,
    RuntimeContext,
    WindowFunction,
)
from flott.datastream.output_tag import OutputTag
from flott.datastream.slot_sharing_group import MemorySize, SlotSharingGroup
from flott.datastream.state_backend import (
    CustomStateBackend,
    EmbeddedRocksDBStateBackend,
    HashMapStateBackend,
    PredefinedOptions,
    StateBackend,
)
from flott.datastream.stream_execution_environment import StreamExecutionEnvironment
from flott.datastream.time_domain import TimeDomain
from flott.datastream.timerservice import TimerService
from flott.datastream.window import (
    CountWindow,
    GlobalWindow,
    MergingWindowAssigner,
    TimeWindow,
    Trigger,
    TriggerResult,
    Window,
    WindowAssigner,
)

__all__ = [
    "AggregateFunction",
    "AllWindowFunction",
    "AllWindowedStream",
    "AsyncDataStream",
    "AsyncFunction",
    "AsyncRetryPredicate",
    "AsyncRetryStrategy",
    "BroadcastConnectedStream",
    "BroadcastProcessFunction",
    "BroadcastStream",
    "CachedDataStream",
    "CheckpointConfig",
    "CheckpointStorage",
    "CheckpointingMode",
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "ConnectedStreams",
    "CountWindow",
    "CustomCheckpointStorage",
    "CustomStateBackend",
    "DataStream",
    "DataStreamSink",
    "EmbeddedRocksDBStateBackend",
    "ExternalizedCheckpointRetention",
    "FileSystemCheckpointStorage",
    "FilterFunction",
    "FlatMapFunction",
    "GlobalWindow",
    "HashMapStateBackend",
    "JobManagerCheckpointStorage",
    "KeySelector",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "KeyedStream",
    "MapFunction",
    "MemorySize",
    "MergingWindowAssigner",
    "OutputTag",
    "Partitioner",
    "PredefinedOptions",
    "ProcessAllWindowFunction",
    "ProcessFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "RuntimeContext",
    "RuntimeExecutionMode",
    "SlotSharingGroup",
    "StateBackend",
    "StreamExecutionEnvironment",
    "TimeDomain",
    "TimeWindow",
    "TimerService",
    "Trigger",
    "TriggerResult",
    "Window",
    "WindowAssigner",
    "WindowFunction",
    "WindowedStream",
]

# SourceFunction/SinkFunction belong to the connectors package (adapters onto the
# Source/Sink contract); resolved on first use so importing flott.datastream never
# depends on the connectors importing cleanly.
_LAZY = {
    "SourceFunction": "flott.datastream.connectors.source_function",
    "SinkFunction": "flott.datastream.connectors.source_function",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'flott.datastream' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value
