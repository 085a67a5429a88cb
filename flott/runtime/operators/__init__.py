"""Stream operators: the batch-at-a-time building blocks of a task's operator chain."""

from flott.runtime.operators.aggregation import ComparableAggregator, SumAggregator, create_aggregator
from flott.runtime.operators.keyed_operators import (
    KeyedProcessContext,
    KeyedProcessOperator,
    StreamGroupedReduceOperator,
)
from flott.runtime.operators.operator_factory import SUPPORTED_KINDS, create_operator
from flott.runtime.operators.runtime_context import StreamingRuntimeContext
from flott.runtime.operators.source_sink import SinkWriterOperator, SourceOperator
from flott.runtime.operators.stateless_operators import (
    ProcessContext,
    ProcessOperator,
    StreamFilter,
    StreamFlatMap,
    StreamMap,
)
from flott.runtime.operators.stream_operator import OperatorSetup, StreamOperator

__all__ = [
    "SUPPORTED_KINDS",
    "ComparableAggregator",
    "KeyedProcessContext",
    "KeyedProcessOperator",
    "OperatorSetup",
    "ProcessContext",
    "ProcessOperator",
    "SinkWriterOperator",
    "SourceOperator",
    "StreamFilter",
    "StreamFlatMap",
    "StreamGroupedReduceOperator",
    "StreamMap",
    "StreamOperator",
    "StreamingRuntimeContext",
    "SumAggregator",
    "create_aggregator",
    "create_operator",
]
