"""BroadcastStream and BroadcastConnectedStream (PyFlink's broadcast state API).

``ds.broadcast(descriptor, ...)`` returns a :class:`BroadcastStream`: the stream, broadcast to every
subtask of its consumer, plus the MapStateDescriptors of the broadcast states it fills.
``other.connect(broadcast_stream)`` gives a :class:`BroadcastConnectedStream`; its ``process``
records a two-input operator whose first input is ``other`` (keyed or not, keeping its
partitioning) and whose second is the broadcast stream. The runtime side is
``flott.runtime.operators.broadcast_operators``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flott.api.common.state import MapStateDescriptor
from flott.api.streaming.functions import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from flott.api.streaming.transformations import TwoInputTransformation
from flott.common import Types
from flott.common.typeinfo import TypeInformation
from flott.runtime.operators.specs import BROADCAST_STATE_NAMES

if TYPE_CHECKING:
    from flott.datastream.data_stream import DataStream

__all__ = ["BroadcastConnectedStream", "BroadcastStream", "check_broadcast_state_descriptors"]


def check_broadcast_state_descriptors(descriptors: list[Any]) -> list[MapStateDescriptor]:
    """PyFlink's check of ``broadcast(...)``'s arguments; names must be unique within one call."""
    for d in descriptors:
        if not isinstance(d, MapStateDescriptor):
            raise TypeError("broadcast_state_descriptor must be MapStateDescriptor")
    names = [d.name for d in descriptors]
    if len(set(names)) != len(names):
        raise ValueError(f"broadcast state names must be unique, got {names}")
    return list(descriptors)


class BroadcastStream:
    """A stream with broadcast state(s); it can only be connected to another stream."""

    def __init__(
        self, input_stream: DataStream, broadcast_state_descriptors: list[MapStateDescriptor]
    ) -> None:
        self.input_stream = input_stream
        """The stream with broadcast partitioning (every record to every consumer subtask)."""
        self.broadcast_state_descriptors = broadcast_state_descriptors


def _output_type(output_type: Any) -> Any:
    """PyFlink's rule: None, a TypeInformation, or a list of field types (an implicit Row type)."""

    if isinstance(output_type, list):

        return Types.ROW(output_type)
    if output_type is not None and not isinstance(output_type, TypeInformation):
        raise TypeError("output_type must be None, list or TypeInformation")
    return output_type


class BroadcastConnectedStream:
    """A (keyed or non-keyed) stream connected with a BroadcastStream."""

    def __init__(
        self,
        non_broadcast_stream: DataStream,
        broadcast_stream: BroadcastStream,
        broadcast_state_descriptors: list[MapStateDescriptor],
    ) -> None:
        self.non_broadcast_stream = non_broadcast_stream
        self.broadcast_stream = broadcast_stream
        self.broadcast_state_descriptors = broadcast_state_descriptors

    def _is_keyed_stream(self) -> bool:
        from flott.datastream.data_stream import KeyedStream

        return isinstance(self.non_broadcast_stream, KeyedStream)

    def process(
        self, func: BroadcastProcessFunction | KeyedBroadcastProcessFunction, output_type: Any = None
    ) -> DataStream:
        """``func.process_element`` on the non-broadcast stream's records, with read-only access to
        the broadcast states; ``func.process_broadcast_element`` on the broadcast records, with
        read-write access. On a KeyedStream the function is a KeyedBroadcastProcessFunction."""
        from flott.datastream.data_stream import DataStream

        keyed = self._is_keyed_stream()
        if isinstance(func, BroadcastProcessFunction) and keyed:
            raise TypeError("BroadcastProcessFunction should be applied to non-keyed DataStream")
        if isinstance(func, KeyedBroadcastProcessFunction) and not keyed:
            raise TypeError("KeyedBroadcastProcessFunction should be applied to keyed DataStream")
        if not isinstance(func, BroadcastProcessFunction | KeyedBroadcastProcessFunction):
            raise TypeError(
                "The input must be a BroadcastProcessFunction or, on a KeyedStream, a "
                "KeyedBroadcastProcessFunction"
            )
        env = self.non_broadcast_stream.get_execution_environment()
        broadcast_input = self.broadcast_stream.input_stream
        if broadcast_input.get_execution_environment() is not env:
            raise ValueError("Cannot connect streams of different execution environments")
        t = TwoInputTransformation(
            name="Keyed-Co-Process-Broadcast" if keyed else "Co-Process-Broadcast",
            parallelism=env.get_parallelism(),
            output_type=_output_type(output_type),
            input1=self.non_broadcast_stream.transformation,
            input2=broadcast_input.transformation,
            kind="keyed_broadcast_process" if keyed else "broadcast_process",
            function=func,
            key_selector1=self.non_broadcast_stream.key_selector if keyed else None,  # type: ignore[attr-defined]
            operator_config={BROADCAST_STATE_NAMES: [d.name for d in self.broadcast_state_descriptors]},
        )
        env._add_operator(t)
        return DataStream(t, env)
