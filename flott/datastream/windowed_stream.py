"""WindowedStream and AllWindowedStream (PyFlink's ``KeyedStream.window`` / ``DataStream.window_all``).

They are API constructs, as in PyFlink: the assigner, trigger, allowed
lateness and late-data tag are collected here, and the window function call
(``reduce``/``aggregate``/``apply``/``process``) records one ``window``
operator whose user object is a :class:`WindowOperatorSpec` bundling all of
them. Non-keyed windows are keyed windows over one constant key at
parallelism 1, as in Flink (``window_all``: every record goes to one subtask).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flott.api.common.durations import to_millis
from flott.api.common.functions import AggregateFunction, KeySelector, ReduceFunction
from flott.api.common.output_tag import OutputTag
from flott.api.streaming.functions import (
    AllWindowFunction,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    WindowFunction,
)
from flott.api.streaming.windowing import (
    CountSlidingWindowAssigner,
    CountTumblingWindowAssigner,
    MergingWindowAssigner,
    Trigger,
    WindowAssigner,
)
from flott.runtime.operators.specs import WindowOperatorSpec

if TYPE_CHECKING:
    from flott.datastream.data_stream import DataStream, KeyedStream


class NullByteKeySelector(KeySelector):
    """The key of ``window_all``: every record has the same key (Flink's ``NullByteKeySelector``)."""

    def get_key(self, value: Any) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NullByteKeySelector)

    def __hash__(self) -> int:
        return 0


class _WindowedBase:
    """What WindowedStream and AllWindowedStream share: settings and building the operator."""

    _all_window = False

    def __init__(self, keyed_stream: KeyedStream, window_assigner: WindowAssigner) -> None:
        if not isinstance(window_assigner, WindowAssigner):
            raise TypeError(f"window() needs a WindowAssigner, got {type(window_assigner).__name__}")
        self._keyed_stream = keyed_stream
        self._window_assigner = window_assigner
        self._allowed_lateness = 0
        self._late_data_output_tag: OutputTag | None = None
        self._window_trigger: Trigger | None = None

    def get_execution_environment(self) -> Any:
        return self._keyed_stream.get_execution_environment()

    def get_input_type(self) -> Any:
        return self._keyed_stream.get_type()

    def _set_trigger(self, trigger: Trigger) -> None:
        if not isinstance(trigger, Trigger):
            raise TypeError(f"trigger() needs a Trigger, got {type(trigger).__name__}")
        if isinstance(self._window_assigner, MergingWindowAssigner) and not trigger.can_merge():
            raise TypeError(
                "A merging window assigner cannot be used with a trigger that does not support merging."
            )
        self._window_trigger = trigger

    def _set_allowed_lateness(self, time_ms: Any) -> None:
        lateness = to_millis(time_ms)
        if lateness < 0:
            raise ValueError("The allowed lateness cannot be negative.")
        self._allowed_lateness = lateness

    def _set_late_tag(self, output_tag: OutputTag) -> None:
        if not isinstance(output_tag, OutputTag):
            raise TypeError("side_output_late_data() needs an OutputTag")
        self._late_data_output_tag = output_tag

    def _build(
        self,
        function_kind: str,
        output_type: Any,
        reduce_function: Any = None,
        aggregate_function: Any = None,
        window_function: Any = None,
    ) -> DataStream:
        from flott.datastream.data_stream import DataStream

        trigger = self._window_trigger
        spec = WindowOperatorSpec(
            assigner=self._window_assigner,
            trigger=trigger,
            allowed_lateness_ms=self._allowed_lateness,
            late_data_tag=self._late_data_output_tag,
            function_kind=function_kind,
            reduce_function=reduce_function,
            aggregate_function=aggregate_function,
            window_function=window_function,
            all_window=self._all_window,
        )
        assigner = self._window_assigner
        if trigger is not None:
            trigger_name = type(trigger).__name__
        elif isinstance(assigner, (CountTumblingWindowAssigner, CountSlidingWindowAssigner)):
            trigger_name = "CountTrigger"  # PyFlink's count assigners default to a plain CountTrigger
        else:
            trigger_name = type(assigner.get_default_trigger(None)).__name__
        given = (reduce_function or aggregate_function, window_function)
        functions = ", ".join(type(f).__name__ for f in given if f is not None)
        # As PyFlink: the operator is named after the assigner's class, and described in full.
        prefix = "AllWindow" if self._all_window else "Window"
        t = self._keyed_stream._one_input("window", type(assigner).__name__, spec, output_type)
        t.description = f"{prefix}({assigner!r}, {trigger_name}, {functions})"
        if self._all_window:
            t.parallelism = 1
            t.parallelism_configured = True
            t.max_parallelism = 1
        return DataStream(t, self._keyed_stream.get_execution_environment())

    def _reduce(self, reduce_function: Any, window_function: Any, output_type: Any) -> DataStream:
        if not isinstance(reduce_function, ReduceFunction) and not callable(reduce_function):
            raise TypeError("The reduce function must be a ReduceFunction or a callable function")
        if window_function is None and output_type is None:
            output_type = self._keyed_stream.transformation.output_type  # the input's declared type
        return self._build(
            "reduce", output_type, reduce_function=reduce_function, window_function=window_function
        )

    def _aggregate(self, aggregate_function: Any, window_function: Any, output_type: Any) -> DataStream:
        if not isinstance(aggregate_function, AggregateFunction) and not callable(
            getattr(aggregate_function, "create_accumulator", None)
        ):
            raise TypeError("aggregate() needs an AggregateFunction")
        return self._build(
            "aggregate", output_type, aggregate_function=aggregate_function, window_function=window_function
        )


class WindowedStream(_WindowedBase):
    """``KeyedStream.window(assigner)``: keyed windows, evaluated per key and window."""

    def trigger(self, trigger: Trigger) -> WindowedStream:
        """Sets the Trigger that decides when a window is evaluated (default: the assigner's)."""
        self._set_trigger(trigger)
        return self

    def allowed_lateness(self, time_ms: int) -> WindowedStream:
        """Keep event-time windows this many ms past their end; later elements still update them."""
        self._set_allowed_lateness(time_ms)
        return self

    def side_output_late_data(self, output_tag: OutputTag) -> WindowedStream:
        """Send elements too late for every window to ``output_tag`` (read it with get_side_output)."""
        self._set_late_tag(output_tag)
        return self

    def reduce(
        self,
        reduce_function: Any,
        window_function: WindowFunction | ProcessWindowFunction | None = None,
        output_type: Any = None,
    ) -> DataStream:
        """Incremental reduce per window; ``window_function`` (optional) gets the one reduced value."""
        return self._reduce(reduce_function, window_function, output_type)

    def aggregate(
        self,
        aggregate_function: AggregateFunction,
        window_function: WindowFunction | ProcessWindowFunction | None = None,
        accumulator_type: Any = None,
        output_type: Any = None,
    ) -> DataStream:
        """Incremental aggregation per window; ``window_function`` (optional) gets the one result."""
        return self._aggregate(aggregate_function, window_function, output_type)

    def apply(self, window_function: WindowFunction, output_type: Any = None) -> DataStream:
        """``window_function.apply(key, window, inputs)`` over all elements of each window."""
        return self._build("apply", output_type, window_function=window_function)

    def process(self, process_window_function: ProcessWindowFunction, output_type: Any = None) -> DataStream:
        """``process(key, context, elements)`` over all elements of each window."""
        if not callable(getattr(process_window_function, "process", None)):
            raise TypeError("process() needs a ProcessWindowFunction")
        return self._build("process", output_type, window_function=process_window_function)


class AllWindowedStream(_WindowedBase):
    """``DataStream.window_all(assigner)``: windows over the whole stream, evaluated by one subtask."""

    _all_window = True

    def __init__(self, data_stream: DataStream, window_assigner: WindowAssigner) -> None:
        super().__init__(data_stream.key_by(NullByteKeySelector()), window_assigner)

    def trigger(self, trigger: Trigger) -> AllWindowedStream:
        self._set_trigger(trigger)
        return self

    def allowed_lateness(self, time_ms: int) -> AllWindowedStream:
        self._set_allowed_lateness(time_ms)
        return self

    def side_output_late_data(self, output_tag: OutputTag) -> AllWindowedStream:
        self._set_late_tag(output_tag)
        return self

    def reduce(
        self,
        reduce_function: Any,
        window_function: AllWindowFunction | ProcessAllWindowFunction | None = None,
        output_type: Any = None,
    ) -> DataStream:
        return self._reduce(reduce_function, window_function, output_type)

    def aggregate(
        self,
        aggregate_function: AggregateFunction,
        window_function: AllWindowFunction | ProcessAllWindowFunction | None = None,
        accumulator_type: Any = None,
        output_type: Any = None,
    ) -> DataStream:
        return self._aggregate(aggregate_function, window_function, output_type)

    def apply(self, window_function: AllWindowFunction, output_type: Any = None) -> DataStream:
        """``window_function.apply(window, inputs)`` over all elements of each window."""
        return self._build("apply", output_type, window_function=window_function)

    def process(
        self, process_window_function: ProcessAllWindowFunction, output_type: Any = None
    ) -> DataStream:
        """``process(context, elements)`` over all elements of each window."""
        if not callable(getattr(process_window_function, "process", None)):
            raise TypeError("process() needs a ProcessAllWindowFunction")
        return self._build("process", output_type, window_function=process_window_function)
