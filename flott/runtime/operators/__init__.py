"""Stream operators: the batch-at-a-time building blocks of a task's operator chain.

The factory that picks an operator by its descriptor's kind is one floor up, in
``flott.runtime.tasks.operator_factory``: it knows every operator, windowing's included, and
windowing builds on this package.
"""

from flott.runtime.operators.aggregation import ComparableAggregator, SumAggregator, create_aggregator
from flott.runtime.operators.co_operators import (
    CoProcessOperator,
    CoStreamFlatMap,
    CoStreamMap,
    KeyedCoProcessOperator,
)
from flott.runtime.operators.keyed_operators import (
    KeyedProcessContext,
    KeyedProcessOperator,
    StreamGroupedReduceOperator,
)
from flott.runtime.operators.runtime_context import StreamingRuntimeContext
from flott.runtime.operators.source_sink import SinkWriterOperator, SourceOperator
from flott.runtime.operators.stateless_operators import (
    ProcessContext,
    ProcessOperator,
    StreamFilter,
    StreamFlatMap,
    StreamMap,
)
from flott.runtime.operators.stream_operator import OperatorSetup, Output, StreamOperator
from flott.runtime.operators.timer_service import InternalTimerService
from flott.runtime.operators.timestamps_watermarks import TimestampsAndWatermarksOperator

__all__ = [
    "CoProcessOperator",
    "CoStreamFlatMap",
    "CoStreamMap",
    "ComparableAggregator",
    "InternalTimerService",
    "KeyedCoProcessOperator",
    "KeyedProcessContext",
    "KeyedProcessOperator",
    "OperatorSetup",
    "Output",
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
    "TimestampsAndWatermarksOperator",
    "create_aggregator",
]
