"""From an OperatorDescriptor's ``kind`` to the runtime operator (Flink's StreamOperatorFactory)."""

from __future__ import annotations

from flott.errors import InvalidJobGraphError, NotYetSupportedError
from flott.runtime.operators.async_wait_operator import AsyncWaitOperator
from flott.runtime.operators.broadcast_operators import (
    CoBroadcastWithKeyedOperator,
    CoBroadcastWithNonKeyedOperator,
)
from flott.runtime.operators.co_operators import (
    CoProcessOperator,
    CoStreamFlatMap,
    CoStreamMap,
    KeyedCoProcessOperator,
)
from flott.runtime.operators.keyed_operators import (
    AGGREGATION_KINDS,
    KeyedProcessOperator,
    StreamGroupedReduceOperator,
)
from flott.runtime.operators.source_sink import SinkWriterOperator, SourceOperator
from flott.runtime.operators.stateless_operators import (
    ProcessOperator,
    StreamFilter,
    StreamFlatMap,
    StreamMap,
)
from flott.runtime.operators.stream_operator import OperatorSetup, StreamOperator
from flott.runtime.operators.timestamps_watermarks import TimestampsAndWatermarksOperator
from flott.runtime.operators.windowing import WindowOperator

_OPERATORS: dict[str, type[StreamOperator]] = {
    "source": SourceOperator,
    "map": StreamMap,
    "flat_map": StreamFlatMap,
    "filter": StreamFilter,
    "process": ProcessOperator,
    "async_wait": AsyncWaitOperator,
    "keyed_process": KeyedProcessOperator,
    "reduce": StreamGroupedReduceOperator,
    **dict.fromkeys(AGGREGATION_KINDS, StreamGroupedReduceOperator),
    "timestamps_watermarks": TimestampsAndWatermarksOperator,
    "window": WindowOperator,
    "co_map": CoStreamMap,
    "co_flat_map": CoStreamFlatMap,
    "co_process": CoProcessOperator,
    "keyed_co_process": KeyedCoProcessOperator,
    "broadcast_process": CoBroadcastWithNonKeyedOperator,
    "keyed_broadcast_process": CoBroadcastWithKeyedOperator,
    "sink": SinkWriterOperator,
    "print": SinkWriterOperator,  # printing is a Sink (PrintSink); accepted under its own kind too
}

SUPPORTED_KINDS = frozenset(_OPERATORS)


def create_operator(setup: OperatorSetup) -> StreamOperator:
    """Build (not yet open) the operator ``setup.descriptor`` describes."""
    kind = setup.descriptor.kind
    operator_class = _OPERATORS.get(kind)
    if operator_class is None:
        if not kind:
            raise InvalidJobGraphError(f"operator '{setup.descriptor.name}' has no kind")
        raise NotYetSupportedError(
            f"operator kind '{kind}' (operator '{setup.descriptor.name}') is not supported yet"
        )
    return operator_class(setup)
