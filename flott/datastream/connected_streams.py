"""ConnectedStreams (PyFlink's ``DataStream.connect``): two streams feeding one two-input operator.

``map``/``flat_map``/``process`` record a two-input operator; its first input
is ``stream1``, its second ``stream2``, each keeping its own partitioning. When
both are keyed (``connect(...).key_by(k1, k2)`` or two KeyedStreams) the
operator is keyed: equal keys of both sides meet in the same subtask and
share keyed state, and a KeyedCoProcessFunction gets timers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flott.api.common.functions import KeySelector
from flott.api.streaming.functions import (
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    KeyedCoProcessFunction,
)
from flott.api.streaming.transformations import TwoInputTransformation

if TYPE_CHECKING:
    from flott.datastream.data_stream import DataStream


def _has_methods(func: Any, *names: str) -> bool:
    return not isinstance(func, type) and all(callable(getattr(func, n, None)) for n in names)


class ConnectedStreams:
    """Two streams of (possibly) different types, processed together by a Co-function."""

    def __init__(self, stream1: DataStream, stream2: DataStream) -> None:
        self.stream1 = stream1
        self.stream2 = stream2

    def _keyed(self) -> bool:
        from flott.datastream.data_stream import KeyedStream

        return isinstance(self.stream1, KeyedStream) and isinstance(self.stream2, KeyedStream)

    def key_by(
        self,
        key_selector1: Callable[[Any], Any] | KeySelector,
        key_selector2: Callable[[Any], Any] | KeySelector,
        key_type: Any = None,
    ) -> ConnectedStreams:
        """Key both inputs (re-keying KeyedStreams from their original streams, as PyFlink does)."""
        from flott.datastream.data_stream import KeyedStream

        ds1 = self.stream1._origin_stream if isinstance(self.stream1, KeyedStream) else self.stream1
        ds2 = self.stream2._origin_stream if isinstance(self.stream2, KeyedStream) else self.stream2
        return ConnectedStreams(ds1.key_by(key_selector1, key_type), ds2.key_by(key_selector2, key_type))

    def _two_input(self, kind: str, name: str, func: Any, output_type: Any) -> DataStream:
        from flott.datastream.data_stream import DataStream, KeyedStream

        env = self.stream1.get_execution_environment()
        if self.stream2.get_execution_environment() is not env:
            raise ValueError("Cannot connect streams of different execution environments")
        keyed = self._keyed()
        if not keyed and (isinstance(self.stream1, KeyedStream) or isinstance(self.stream2, KeyedStream)):
            raise ValueError(
                "Both inputs must be keyed (or neither): "
                "use connect(...).key_by(key_selector1, key_selector2)"
            )
        t = TwoInputTransformation(
            name=name,
            parallelism=env.get_parallelism(),
            output_type=output_type,
            input1=self.stream1.transformation,
            input2=self.stream2.transformation,
            kind=kind,
            function=func,
            key_selector1=self.stream1.key_selector if keyed else None,  # type: ignore[attr-defined]
            key_selector2=self.stream2.key_selector if keyed else None,  # type: ignore[attr-defined]
        )
        env._add_operator(t)
        return DataStream(t, env)

    def map(self, func: CoMapFunction, output_type: Any = None) -> DataStream:
        """``map1`` on records of the first input, ``map2`` on records of the second."""
        if not isinstance(func, CoMapFunction) and not _has_methods(func, "map1", "map2"):
            raise TypeError("The input function must be a CoMapFunction!")
        return self._two_input("co_map", "Co-Map", func, output_type)

    def flat_map(self, func: CoFlatMapFunction, output_type: Any = None) -> DataStream:
        """``flat_map1``/``flat_map2`` yield any number of records per input record."""
        if not isinstance(func, CoFlatMapFunction) and not _has_methods(func, "flat_map1", "flat_map2"):
            raise TypeError("The input must be a CoFlatMapFunction!")
        return self._two_input("co_flat_map", "Co-Flat Map", func, output_type)

    def process(
        self, func: CoProcessFunction | KeyedCoProcessFunction, output_type: Any = None
    ) -> DataStream:
        """A CoProcessFunction, or on keyed connected streams a KeyedCoProcessFunction (with timers)."""
        if self._keyed():
            if not isinstance(func, KeyedCoProcessFunction):
                raise TypeError("KeyedCoProcessFunction is required for keyed ConnectedStreams")
            return self._two_input("keyed_co_process", "Keyed Co-Process", func, output_type)
        if isinstance(func, KeyedCoProcessFunction):
            raise TypeError(
                "KeyedCoProcessFunction can only be applied to keyed ConnectedStreams (call key_by)"
            )
        if not isinstance(func, CoProcessFunction):
            raise TypeError("CoProcessFunction is required for ConnectedStreams")
        return self._two_input("co_process", "Co-Process", func, output_type)
