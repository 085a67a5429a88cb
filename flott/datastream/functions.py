"""User function interfaces (PyFlink's ``pyflink.datastream.functions``).

The classes live on the ground floor, where the runtime's operators find them too:
``flott.api.common.functions`` (Flink's ``api.common.functions``) and
``flott.api.streaming.functions`` (Flink's ``streaming.api.functions``). This module hands them
out under PyFlink's import path, the same objects.
"""

from __future__ import annotations

import importlib
from typing import Any

from flott.api.common.functions import (
    AggregateFunction,
    FilterFunction,
    FlatMapFunction,
    Function,
    KeySelector,
    MapFunction,
    Partitioner,
    ReduceFunction,
    RuntimeContext,
)
from flott.api.streaming.async_retry import (
    AsyncRetryPredicate,
    AsyncRetryStrategy,
)
from flott.api.streaming.functions import (
    AllWindowFunction,
    AsyncFunction,
    AsyncFunctionDescriptor,
    BaseBroadcastProcessFunction,
    BroadcastProcessFunction,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    ProcessAllWindowFunction,
    ProcessFunction,
    ProcessWindowFunction,
    WindowFunction,
)
from flott.api.streaming.timer_service import TimerService

__all__ = [
    "AggregateFunction",
    "AllWindowFunction",
    "AsyncFunction",
    "AsyncFunctionDescriptor",
    "AsyncRetryPredicate",
    "AsyncRetryStrategy",
    "BaseBroadcastProcessFunction",
    "BroadcastProcessFunction",
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "FilterFunction",
    "FlatMapFunction",
    "Function",
    "KeySelector",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "KeyedProcessFunction",
    "MapFunction",
    "Partitioner",
    "ProcessAllWindowFunction",
    "ProcessFunction",
    "ProcessWindowFunction",
    "ReduceFunction",
    "RuntimeContext",
    "TimerService",
    "WindowFunction",
]


# SourceFunction / SinkFunction live with the connectors (they are adapters onto the
# Source/Sink contract); they are re-exported here lazily because PyFlink programs import
# them from ``pyflink.datastream.functions`` and the connectors package may import this one.
_CONNECTOR_REEXPORTS = {
    "SourceFunction": ("flott.datastream.connectors.source_function", "SourceFunction"),
    "SinkFunction": ("flott.datastream.connectors.source_function", "SinkFunction"),
}


def __getattr__(name: str) -> Any:
    if name in _CONNECTOR_REEXPORTS:
        module_name, attr = _CONNECTOR_REEXPORTS[name]
        try:
            module = importlib.import_module(module_name)
        except ImportError as e:
            raise AttributeError(f"{name} is not available: {e}") from None
        return getattr(module, attr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
