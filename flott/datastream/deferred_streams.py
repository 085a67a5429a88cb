"""Stream types of features flott builds in later issues.

WindowedStream, AllWindowedStream, ConnectedStreams, BroadcastStream,
BroadcastConnectedStream and CachedDataStream exist under their PyFlink names
(programs import and annotate with them), record what they are given, and
raise NotYetSupportedError naming the feature from every operation. Today the
DataStream methods that would return them already raise, so user code only
meets these classes through imports and type hints.
"""

from __future__ import annotations

from typing import Any

from flott.errors import NotYetSupportedError


def _not_yet(feature: str, call: str) -> NotYetSupportedError:
    return NotYetSupportedError(f"{call}: {feature} is not yet supported by flott")


class WindowedStream:
    """``KeyedStream.window(assigner)``: keyed windows (windows issue)."""

    def __init__(self, keyed_stream: Any, window_assigner: Any) -> None:
        self._keyed_stream = keyed_stream
        self._window_assigner = window_assigner

    def get_execution_environment(self) -> Any:
        return self._keyed_stream.get_execution_environment()

    def get_input_type(self) -> Any:
        return self._keyed_stream.get_type()

    def trigger(self, trigger: Any) -> WindowedStream:
        raise _not_yet("windows", "WindowedStream.trigger")

    def allowed_lateness(self, time_ms: int) -> WindowedStream:
        raise _not_yet("windows", "WindowedStream.allowed_lateness")

    def side_output_late_data(self, output_tag: Any) -> WindowedStream:
        raise _not_yet("windows", "WindowedStream.side_output_late_data")

    def reduce(self, reduce_function: Any, window_function: Any = None, output_type: Any = None) -> Any:
        raise _not_yet("windows", "WindowedStream.reduce")

    def aggregate(
        self,
        aggregate_function: Any,
        window_function: Any = None,
        accumulator_type: Any = None,
        output_type: Any = None,
    ) -> Any:
        raise _not_yet("windows", "WindowedStream.aggregate")

    def apply(self, window_function: Any, output_type: Any = None) -> Any:
        raise _not_yet("windows", "WindowedStream.apply")

    def process(self, process_window_function: Any, output_type: Any = None) -> Any:
        raise _not_yet("windows", "WindowedStream.process")


class AllWindowedStream:
    """``DataStream.window_all(assigner)``: non-keyed windows (windows issue)."""

    def __init__(self, data_stream: Any, window_assigner: Any) -> None:
        self._data_stream = data_stream
        self._window_assigner = window_assigner

    def get_execution_environment(self) -> Any:
        return self._data_stream.get_execution_environment()

    def get_input_type(self) -> Any:
        return self._data_stream.get_type()

    def trigger(self, trigger: Any) -> AllWindowedStream:
        raise _not_yet("windows", "AllWindowedStream.trigger")

    def allowed_lateness(self, time_ms: int) -> AllWindowedStream:
        raise _not_yet("windows", "AllWindowedStream.allowed_lateness")

    def side_output_late_data(self, output_tag: Any) -> AllWindowedStream:
        raise _not_yet("windows", "AllWindowedStream.side_output_late_data")

    def reduce(self, reduce_function: Any, window_function: Any = None, output_type: Any = None) -> Any:
        raise _not_yet("windows", "AllWindowedStream.reduce")

    def aggregate(
        self,
        aggregate_function: Any,
        window_function: Any = None,
        accumulator_type: Any = None,
        output_type: Any = None,
    ) -> Any:
        raise _not_yet("windows", "AllWindowedStream.aggregate")

    def apply(self, window_function: Any, output_type: Any = None) -> Any:
        raise _not_yet("windows", "AllWindowedStream.apply")

    def process(self, process_window_function: Any, output_type: Any = None) -> Any:
        raise _not_yet("windows", "AllWindowedStream.process")


class ConnectedStreams:
    """``DataStream.connect(other)``: two-input operators (two-input issue)."""

    def __init__(self, stream1: Any, stream2: Any) -> None:
        self.stream1 = stream1
        self.stream2 = stream2

    def key_by(self, key_selector1: Any, key_selector2: Any, key_type: Any = None) -> ConnectedStreams:
        raise _not_yet("connected streams (two-input operators)", "ConnectedStreams.key_by")

    def map(self, func: Any, output_type: Any = None) -> Any:
        raise _not_yet("connected streams (two-input operators)", "ConnectedStreams.map")

    def flat_map(self, func: Any, output_type: Any = None) -> Any:
        raise _not_yet("connected streams (two-input operators)", "ConnectedStreams.flat_map")

    def process(self, func: Any, output_type: Any = None) -> Any:
        raise _not_yet("connected streams (two-input operators)", "ConnectedStreams.process")


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


class CloseableIterator:
    """What ``execute_and_collect`` returns in PyFlink (collecting results comes later)."""

    def __iter__(self) -> CloseableIterator:
        return self

    def __next__(self) -> Any:
        raise _not_yet("collecting results to the client", "CloseableIterator")

    def close(self) -> None:
        return None

    def __enter__(self) -> CloseableIterator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
