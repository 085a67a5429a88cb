"""Stream types of features flott builds in later issues.

BroadcastStream, BroadcastConnectedStream and CachedDataStream exist under
their PyFlink names (programs import and annotate with them), record what they
are given, and raise NotYetSupportedError naming the feature from every
operation. Today the DataStream methods that would return them already raise,
so user code only meets these classes through imports and type hints.
(Windowed and connected streams live in ``windowed_stream`` and ``connected_streams``.)
"""

from __future__ import annotations

from typing import Any

from flott.errors import NotYetSupportedError


def _not_yet(feature: str, call: str) -> NotYetSupportedError:
    return NotYetSupportedError(f"{call}: {feature} is not yet supported by flott")


class BroadcastStream:
    """``DataStream.broadcast(descriptor)``: a stream carrying broadcast state."""

    def __init__(self, input_stream: Any, broadcast_state_descriptors: list[Any]) -> None:
        self.input_stream = input_stream
        self.broadcast_state_descriptors = broadcast_state_descriptors


class BroadcastConnectedStream:
    """A stream connected with a BroadcastStream (broadcast state issue)."""

    def __init__(
        self, non_broadcast_stream: Any, broadcast_stream: Any, broadcast_state_descriptors: list[Any]
    ) -> None:
        self.non_broadcast_stream = non_broadcast_stream
        self.broadcast_stream = broadcast_stream
        self.broadcast_state_descriptors = broadcast_state_descriptors

    def process(self, func: Any, output_type: Any = None) -> Any:
        raise _not_yet("broadcast state", "BroadcastConnectedStream.process")


class CachedDataStream:
    """``DataStream.cache()``: results cached across jobs of one environment."""

    def __init__(self, data_stream: Any) -> None:
        self._data_stream = data_stream

    def invalidate(self) -> None:
        raise _not_yet("cached data streams", "CachedDataStream.invalidate")
