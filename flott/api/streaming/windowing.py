"""Windows, window assigners and triggers (Flink's ``org.apache.flink.streaming.api.windowing``).

PyFlink's ``pyflink.datastream.window`` re-exports them (``flott.datastream.window``); they live
on this floor because the window operator drives them as much as programs build them.

What is here is pure computation (window arithmetic, which windows a timestamp
falls into, trigger decisions over the TriggerContext interface); the window
operator (``flott.runtime.operators.windowing``) drives it.
"""

from __future__ import annotations

import struct
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable
from enum import Enum
from typing import IO, Any, Generic, TypeVar

from flott.api.common.durations import to_millis
from flott.api.common.state import ReducingStateDescriptor, State, ValueStateDescriptor
from flott.common.serializer import TypeSerializer
from flott.common.typeinfo import Types

T = TypeVar("T")
W = TypeVar("W", bound="Window")

MAX_LONG = 2**63 - 1
MIN_LONG = -(2**63)

__all__ = [
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
    "CountSlidingWindowAssigner",
    "CountTrigger",
    "CountTumblingWindowAssigner",
    "CountWindow",
    "CountWindowSerializer",
    "DynamicEventTimeSessionWindows",
    "DynamicProcessingTimeSessionWindows",
    "EventTimeSessionWindows",
    "EventTimeTrigger",
    "GlobalWindow",
    "GlobalWindowSerializer",
    "GlobalWindows",
    "MergingWindowAssigner",
    "NeverTrigger",
    "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "SessionWindowTimeGapExtractor",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "TimeWindow",
    "TimeWindowSerializer",
    "Trigger",
    "TriggerResult",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "Window",
    "WindowAssigner",
]


# --------------------------------------------------------------------------- windows


class Window(ABC):
    __slots__ = ()

    @abstractmethod
    def max_timestamp(self) -> int: ...


class TimeWindow(tuple, Window):
    """The half-open interval ``[start, end)`` in milliseconds.

    A tuple underneath: windows are dict keys on the window operator's per-record
    path (its contents and timers are keyed by window), and a tuple's hash and
    equality run in C instead of two Python calls per lookup.
    """

    __slots__ = ()

    def __new__(cls, start: int, end: int) -> TimeWindow:
        return tuple.__new__(cls, (start, end))

    def __getnewargs__(self) -> tuple[int, int]:  # type: ignore[override]
        return (self[0], self[1])

    @property
    def start(self) -> int:
        return self[0]  # type: ignore[no-any-return]

    @property
    def end(self) -> int:
        return self[1]  # type: ignore[no-any-return]

    def max_timestamp(self) -> int:
        return self[1] - 1  # type: ignore[no-any-return]

    def intersects(self, other: TimeWindow) -> bool:
        return self.start <= other.end and self.end >= other.start

    def cover(self, other: TimeWindow) -> TimeWindow:
        return TimeWindow(min(self.start, other.start), max(self.end, other.end))

    @staticmethod
    def get_window_start_with_offset(timestamp: int, offset: int, window_size: int) -> int:
        """Start of the window of ``window_size`` (shifted by ``offset``) containing ``timestamp``."""
        return timestamp - (timestamp - offset + window_size) % window_size

    @staticmethod
    def merge_windows(windows: Iterable[TimeWindow], callback: MergingWindowAssigner.MergeCallback) -> None:
        """Merge overlapping windows, reporting each merge of two or more to ``callback``."""
        ordered = sorted(windows, key=lambda w: w.start)
        groups: list[tuple[TimeWindow, list[TimeWindow]]] = []
        for window in ordered:
            if groups and groups[-1][0].intersects(window):
                cover, members = groups[-1]
                groups[-1] = (cover.cover(window), [*members, window])
            else:
                groups.append((window, [window]))
        for merged, members in groups:
            if len(members) > 1:
                callback.merge(members, merged)

    def __repr__(self) -> str:
        return f"TimeWindow(start={self.start}, end={self.end})"


class CountWindow(Window):
    """The ``id``-th window of a count-based assigner."""

    def __init__(self, id: int) -> None:
        self.id = id

    def max_timestamp(self) -> int:
        return MAX_LONG

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CountWindow) and self.id == other.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"CountWindow(id={self.id})"


class GlobalWindow(Window):
    """The single window of GlobalWindows."""

    _instance: GlobalWindow | None = None

    @staticmethod
    def get() -> GlobalWindow:
        if GlobalWindow._instance is None:
            GlobalWindow._instance = GlobalWindow()
        return GlobalWindow._instance

    def max_timestamp(self) -> int:
        return MAX_LONG

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GlobalWindow)

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "GlobalWindow"


# --------------------------------------------------------------------------- serializers


class TimeWindowSerializer(TypeSerializer[TimeWindow]):
    """Two big-endian longs, as Flink writes a TimeWindow."""

    def serialize(self, element: TimeWindow, stream: IO[bytes]) -> None:
        stream.write(struct.pack(">qq", element.start, element.end))

    def deserialize(self, stream: IO[bytes]) -> TimeWindow:
        start, end = struct.unpack(">qq", stream.read(16))
        return TimeWindow(start, end)


class CountWindowSerializer(TypeSerializer[CountWindow]):
    def serialize(self, element: CountWindow, stream: IO[bytes]) -> None:
        stream.write(struct.pack(">q", element.id))

    def deserialize(self, stream: IO[bytes]) -> CountWindow:
        return CountWindow(struct.unpack(">q", stream.read(8))[0])


class GlobalWindowSerializer(TypeSerializer[GlobalWindow]):
    def serialize(self, element: GlobalWindow, stream: IO[bytes]) -> None:
        stream.write(b"\x00")

    def deserialize(self, stream: IO[bytes]) -> GlobalWindow:
        stream.read(1)
        return GlobalWindow.get()


# --------------------------------------------------------------------------- triggers


class TriggerResult(Enum):
    CONTINUE = (False, False)
    FIRE_AND_PURGE = (True, True)
    FIRE = (True, False)
    PURGE = (False, True)

    def is_fire(self) -> bool:
        return self.value[0]

    def is_purge(self) -> bool:
        return self.value[1]


class Trigger(ABC, Generic[T, W]):
    """Decides when a window fires; called by the window operator with a TriggerContext."""

    class TriggerContext(ABC):
        @abstractmethod
        def get_current_processing_time(self) -> int: ...

        @abstractmethod
        def get_metric_group(self) -> Any: ...

        @abstractmethod
        def get_current_watermark(self) -> int: ...

        @abstractmethod
        def register_processing_time_timer(self, time: int) -> None: ...

        @abstractmethod
        def register_event_time_timer(self, time: int) -> None: ...

        @abstractmethod
        def delete_processing_time_timer(self, time: int) -> None: ...

        @abstractmethod
        def delete_event_time_timer(self, time: int) -> None: ...

        @abstractmethod
        def get_partitioned_state(self, state_descriptor: Any) -> State: ...

    class OnMergeContext(TriggerContext):
        @abstractmethod
        def merge_partitioned_state(self, state_descriptor: Any) -> None: ...

    @abstractmethod
    def on_element(
        self, element: T, timestamp: int, window: W, ctx: Trigger.TriggerContext
    ) -> TriggerResult: ...

    @abstractmethod
    def on_processing_time(self, time: int, window: W, ctx: Trigger.TriggerContext) -> TriggerResult: ...

    @abstractmethod
    def on_event_time(self, time: int, window: W, ctx: Trigger.TriggerContext) -> TriggerResult: ...

    def can_merge(self) -> bool:
        return False

    def on_merge(self, window: W, ctx: Trigger.OnMergeContext) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not support merging windows")

    @abstractmethod
    def clear(self, window: W, ctx: Trigger.TriggerContext) -> None: ...


class EventTimeTrigger(Trigger[T, TimeWindow]):
    """Fires once the watermark passes the window's end."""

    @staticmethod
    def create() -> EventTimeTrigger:
        return EventTimeTrigger()

    def on_element(
        self, element: Any, timestamp: int, window: TimeWindow, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE if time == window.max_timestamp() else TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: TimeWindow, ctx: Trigger.OnMergeContext) -> None:
        if window.max_timestamp() > ctx.get_current_watermark():
            ctx.register_event_time_timer(window.max_timestamp())

    def clear(self, window: TimeWindow, ctx: Trigger.TriggerContext) -> None:
        ctx.delete_event_time_timer(window.max_timestamp())


class ProcessingTimeTrigger(Trigger[T, TimeWindow]):
    """Fires when processing time passes the window's end."""

    @staticmethod
    def create() -> ProcessingTimeTrigger:
        return ProcessingTimeTrigger()

    def on_element(
        self, element: Any, timestamp: int, window: TimeWindow, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        ctx.register_processing_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: TimeWindow, ctx: Trigger.OnMergeContext) -> None:
        if window.max_timestamp() > ctx.get_current_processing_time():
            ctx.register_processing_time_timer(window.max_timestamp())

    def clear(self, window: TimeWindow, ctx: Trigger.TriggerContext) -> None:
        ctx.delete_processing_time_timer(window.max_timestamp())


def _sum(a: int, b: int) -> int:
    return a + b


def _min(a: int, b: int) -> int:
    return min(a, b)


def _long_type() -> Any:
    """Types.LONG(): the type the triggers' state descriptors record."""
    return Types.LONG()


class CountTrigger(Trigger[T, CountWindow]):
    """Fires when ``window_size`` elements have arrived in the window."""

    def __init__(self, window_size: int) -> None:
        if window_size <= 0:
            raise ValueError("window_size must be > 0")
        self._window_size = window_size
        self._count_descriptor = ReducingStateDescriptor("count", _sum, _long_type())

    @staticmethod
    def of(window_size: int) -> CountTrigger:
        return CountTrigger(window_size)

    def on_element(
        self, element: Any, timestamp: int, window: Window, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        count: Any = ctx.get_partitioned_state(self._count_descriptor)
        count.add(1)
        if count.get() >= self._window_size:
            count.clear()
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Window, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Window, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Window, ctx: Trigger.OnMergeContext) -> None:
        ctx.merge_partitioned_state(self._count_descriptor)

    def clear(self, window: Window, ctx: Trigger.TriggerContext) -> None:
        ctx.get_partitioned_state(self._count_descriptor).clear()


class PurgingTrigger(Trigger[T, Window]):
    """Turns every FIRE of the nested trigger into FIRE_AND_PURGE."""

    def __init__(self, nested_trigger: Trigger) -> None:
        self._nested_trigger = nested_trigger

    @staticmethod
    def of(nested_trigger: Trigger) -> PurgingTrigger:
        return PurgingTrigger(nested_trigger)

    @staticmethod
    def _purging(result: TriggerResult) -> TriggerResult:
        return TriggerResult.FIRE_AND_PURGE if result.is_fire() else result

    def on_element(
        self, element: Any, timestamp: int, window: Window, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        return self._purging(self._nested_trigger.on_element(element, timestamp, window, ctx))

    def on_event_time(self, time: int, window: Window, ctx: Trigger.TriggerContext) -> TriggerResult:
        return self._purging(self._nested_trigger.on_event_time(time, window, ctx))

    def on_processing_time(self, time: int, window: Window, ctx: Trigger.TriggerContext) -> TriggerResult:
        return self._purging(self._nested_trigger.on_processing_time(time, window, ctx))

    def can_merge(self) -> bool:
        return self._nested_trigger.can_merge()

    def on_merge(self, window: Window, ctx: Trigger.OnMergeContext) -> None:
        self._nested_trigger.on_merge(window, ctx)

    def clear(self, window: Window, ctx: Trigger.TriggerContext) -> None:
        self._nested_trigger.clear(window, ctx)


class NeverTrigger(Trigger[T, GlobalWindow]):
    """The default trigger of GlobalWindows: never fires."""

    def on_element(
        self, element: Any, timestamp: int, window: GlobalWindow, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: GlobalWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(
        self, time: int, window: GlobalWindow, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_merge(self, window: GlobalWindow, ctx: Trigger.OnMergeContext) -> None:
        return None

    def clear(self, window: GlobalWindow, ctx: Trigger.TriggerContext) -> None:
        return None


class _ContinuousTrigger(Trigger[T, TimeWindow]):
    """Fires every ``interval`` ms within a window (and at its end)."""

    def __init__(self, interval: int) -> None:
        if interval <= 0:
            raise ValueError("interval must be > 0")
        self.interval = interval
        self._fire_timestamp_descriptor = ReducingStateDescriptor("fire-time", _min, _long_type())

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: TimeWindow, ctx: Trigger.OnMergeContext) -> None:
        ctx.merge_partitioned_state(self._fire_timestamp_descriptor)

    def register_next_fire_timestamp(
        self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext, fire_timestamp_state: Any
    ) -> None:
        next_fire = min(time + self.interval, window.max_timestamp())
        fire_timestamp_state.add(next_fire)
        self._register(ctx, next_fire)

    @abstractmethod
    def _register(self, ctx: Trigger.TriggerContext, time: int) -> None: ...

    @abstractmethod
    def _delete(self, ctx: Trigger.TriggerContext, time: int) -> None: ...

    def clear(self, window: TimeWindow, ctx: Trigger.TriggerContext) -> None:
        state: Any = ctx.get_partitioned_state(self._fire_timestamp_descriptor)
        timestamp = state.get()
        if timestamp is not None:
            self._delete(ctx, timestamp)
            state.clear()


class ContinuousEventTimeTrigger(_ContinuousTrigger[T]):
    @staticmethod
    def of(interval: Any) -> ContinuousEventTimeTrigger:
        return ContinuousEventTimeTrigger(to_millis(interval))

    def _register(self, ctx: Trigger.TriggerContext, time: int) -> None:
        ctx.register_event_time_timer(time)

    def _delete(self, ctx: Trigger.TriggerContext, time: int) -> None:
        ctx.delete_event_time_timer(time)

    def on_element(
        self, element: Any, timestamp: int, window: TimeWindow, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp())
        state: Any = ctx.get_partitioned_state(self._fire_timestamp_descriptor)
        if state.get() is None:
            self.register_next_fire_timestamp(timestamp - timestamp % self.interval, window, ctx, state)
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        if time == window.max_timestamp():
            return TriggerResult.FIRE
        state: Any = ctx.get_partitioned_state(self._fire_timestamp_descriptor)
        fire_timestamp = state.get()
        if fire_timestamp is not None and fire_timestamp == time:
            state.clear()
            self.register_next_fire_timestamp(time, window, ctx, state)
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def clear(self, window: TimeWindow, ctx: Trigger.TriggerContext) -> None:
        super().clear(window, ctx)
        ctx.delete_event_time_timer(window.max_timestamp())


class ContinuousProcessingTimeTrigger(_ContinuousTrigger[T]):
    @staticmethod
    def of(interval: Any) -> ContinuousProcessingTimeTrigger:
        return ContinuousProcessingTimeTrigger(to_millis(interval))

    def _register(self, ctx: Trigger.TriggerContext, time: int) -> None:
        ctx.register_processing_time_timer(time)

    def _delete(self, ctx: Trigger.TriggerContext, time: int) -> None:
        ctx.delete_processing_time_timer(time)

    def on_element(
        self, element: Any, timestamp: int, window: TimeWindow, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        state: Any = ctx.get_partitioned_state(self._fire_timestamp_descriptor)
        now = ctx.get_current_processing_time()
        if state.get() is None:
            self.register_next_fire_timestamp(now - now % self.interval, window, ctx, state)
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext) -> TriggerResult:
        state: Any = ctx.get_partitioned_state(self._fire_timestamp_descriptor)
        if state.get() == time:
            state.clear()
            self.register_next_fire_timestamp(time, window, ctx, state)
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE


# --------------------------------------------------------------------------- assigners


class WindowAssigner(ABC, Generic[T, W]):
    """Assigns each element to zero or more windows."""

    class WindowAssignerContext(ABC):
        @abstractmethod
        def get_current_processing_time(self) -> int: ...

        @abstractmethod
        def get_runtime_context(self) -> Any: ...

    @abstractmethod
    def assign_windows(
        self, element: T, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> Collection[W]: ...

    @abstractmethod
    def get_default_trigger(self, env: Any) -> Trigger[T, W]: ...

    @abstractmethod
    def get_window_serializer(self) -> Any: ...

    @abstractmethod
    def is_event_time(self) -> bool: ...


class MergingWindowAssigner(WindowAssigner[T, W]):
    class MergeCallback(ABC, Generic[W]):  # type: ignore[misc]
        @abstractmethod
        def merge(self, to_be_merged: Iterable[W], merge_result: W) -> None: ...

    @abstractmethod
    def merge_windows(self, windows: Iterable[W], callback: MergingWindowAssigner.MergeCallback) -> None: ...


def _check_timestamp(timestamp: int | None) -> int:
    if timestamp is None or timestamp <= MIN_LONG:
        raise ValueError(
            "Record has no timestamp. Is the time characteristic set to 'ProcessingTime', or did you "
            "forget to call 'data_stream.assign_timestamps_and_watermarks(...)'?"
        )
    return timestamp


class _TumblingWindows(WindowAssigner[T, TimeWindow]):
    def __init__(self, size: int, offset: int = 0) -> None:
        if size <= 0 or abs(offset) >= size:
            raise ValueError("tumbling windows need size > 0 and |offset| < size")
        self._size = size
        self._offset = offset

    def _windows_at(self, timestamp: int) -> list[TimeWindow]:
        start = TimeWindow.get_window_start_with_offset(timestamp, self._offset, self._size)
        return [TimeWindow(start, start + self._size)]

    def get_window_serializer(self) -> TimeWindowSerializer:
        return TimeWindowSerializer()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._size}, {self._offset})"


class TumblingEventTimeWindows(_TumblingWindows[T]):
    @staticmethod
    def of(size: Any, offset: Any = None) -> TumblingEventTimeWindows:
        return TumblingEventTimeWindows(to_millis(size), 0 if offset is None else to_millis(offset))

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> list[TimeWindow]:
        return self._windows_at(_check_timestamp(timestamp))

    def get_default_trigger(self, env: Any) -> EventTimeTrigger:
        return EventTimeTrigger()

    def is_event_time(self) -> bool:
        return True


class TumblingProcessingTimeWindows(_TumblingWindows[T]):
    @staticmethod
    def of(size: Any, offset: Any = None) -> TumblingProcessingTimeWindows:
        return TumblingProcessingTimeWindows(to_millis(size), 0 if offset is None else to_millis(offset))

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> list[TimeWindow]:
        return self._windows_at(context.get_current_processing_time())

    def get_default_trigger(self, env: Any) -> ProcessingTimeTrigger:
        return ProcessingTimeTrigger()

    def is_event_time(self) -> bool:
        return False


class _SlidingWindows(WindowAssigner[T, TimeWindow]):
    def __init__(self, size: int, slide: int, offset: int = 0) -> None:
        if size <= 0 or slide <= 0 or abs(offset) >= slide:
            raise ValueError("sliding windows need size > 0, slide > 0 and |offset| < slide")
        self._size = size
        self._slide = slide
        self._offset = offset

    def _windows_at(self, timestamp: int) -> list[TimeWindow]:
        windows = []
        start = TimeWindow.get_window_start_with_offset(timestamp, self._offset, self._slide)
        while start > timestamp - self._size:
            windows.append(TimeWindow(start, start + self._size))
            start -= self._slide
        return windows

    def get_window_serializer(self) -> TimeWindowSerializer:
        return TimeWindowSerializer()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._size}, {self._slide}, {self._offset})"


class SlidingEventTimeWindows(_SlidingWindows[T]):
    @staticmethod
    def of(size: Any, slide: Any, offset: Any = None) -> SlidingEventTimeWindows:
        return SlidingEventTimeWindows(
            to_millis(size), to_millis(slide), 0 if offset is None else to_millis(offset)
        )

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> list[TimeWindow]:
        return self._windows_at(_check_timestamp(timestamp))

    def get_default_trigger(self, env: Any) -> EventTimeTrigger:
        return EventTimeTrigger()

    def is_event_time(self) -> bool:
        return True


class SlidingProcessingTimeWindows(_SlidingWindows[T]):
    @staticmethod
    def of(size: Any, slide: Any, offset: Any = None) -> SlidingProcessingTimeWindows:
        return SlidingProcessingTimeWindows(
            to_millis(size), to_millis(slide), 0 if offset is None else to_millis(offset)
        )

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> list[TimeWindow]:
        return self._windows_at(context.get_current_processing_time())

    def get_default_trigger(self, env: Any) -> ProcessingTimeTrigger:
        return ProcessingTimeTrigger()

    def is_event_time(self) -> bool:
        return False


class SessionWindowTimeGapExtractor(ABC):
    """Computes the session gap (ms) of an element for dynamic session windows."""

    @abstractmethod
    def extract(self, element: Any) -> int: ...


class _SessionWindows(MergingWindowAssigner[T, TimeWindow]):
    def _gap_for(self, element: Any) -> int:
        raise NotImplementedError

    def _session_at(self, element: Any, timestamp: int) -> list[TimeWindow]:
        gap = self._gap_for(element)
        if gap <= 0:
            raise ValueError("session gap must be > 0")
        return [TimeWindow(timestamp, timestamp + gap)]

    def merge_windows(
        self, windows: Iterable[TimeWindow], callback: MergingWindowAssigner.MergeCallback
    ) -> None:
        TimeWindow.merge_windows(windows, callback)

    def get_window_serializer(self) -> TimeWindowSerializer:
        return TimeWindowSerializer()


class _StaticGap(_SessionWindows[T]):
    def __init__(self, session_gap: int) -> None:
        if session_gap <= 0:
            raise ValueError("session gap must be > 0")
        self._session_gap = session_gap

    def _gap_for(self, element: Any) -> int:
        return self._session_gap

    def __repr__(self) -> str:  # part of the window operator's description, as in PyFlink
        return f"{type(self).__name__}({self._session_gap})"


class _DynamicGap(_SessionWindows[T]):
    def __init__(self, session_window_time_gap_extractor: SessionWindowTimeGapExtractor) -> None:
        self._extractor = session_window_time_gap_extractor

    def _gap_for(self, element: Any) -> int:
        extractor: Any = self._extractor
        extract = getattr(extractor, "extract", extractor)
        return to_millis(extract(element))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self._extractor).__name__})"


class DynamicEventTimeSessionWindows(_DynamicGap[T]):
    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor) -> DynamicEventTimeSessionWindows:
        return DynamicEventTimeSessionWindows(extractor)

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> list[TimeWindow]:
        return self._session_at(element, _check_timestamp(timestamp))

    def get_default_trigger(self, env: Any) -> EventTimeTrigger:
        return EventTimeTrigger()

    def is_event_time(self) -> bool:
        return True


class DynamicProcessingTimeSessionWindows(_DynamicGap[T]):
    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor) -> DynamicProcessingTimeSessionWindows:
        return DynamicProcessingTimeSessionWindows(extractor)

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> list[TimeWindow]:
        return self._session_at(element, context.get_current_processing_time())

    def get_default_trigger(self, env: Any) -> ProcessingTimeTrigger:
        return ProcessingTimeTrigger()

    def is_event_time(self) -> bool:
        return False


class EventTimeSessionWindows(_StaticGap[T]):
    @staticmethod
    def with_gap(size: Any) -> EventTimeSessionWindows:
        return EventTimeSessionWindows(to_millis(size))

    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor) -> DynamicEventTimeSessionWindows:
        return DynamicEventTimeSessionWindows(extractor)

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> list[TimeWindow]:
        return self._session_at(element, _check_timestamp(timestamp))

    def get_default_trigger(self, env: Any) -> EventTimeTrigger:
        return EventTimeTrigger()

    def is_event_time(self) -> bool:
        return True


class ProcessingTimeSessionWindows(_StaticGap[T]):
    @staticmethod
    def with_gap(size: Any) -> ProcessingTimeSessionWindows:
        return ProcessingTimeSessionWindows(to_millis(size))

    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor) -> DynamicProcessingTimeSessionWindows:
        return DynamicProcessingTimeSessionWindows(extractor)

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> list[TimeWindow]:
        return self._session_at(element, context.get_current_processing_time())

    def get_default_trigger(self, env: Any) -> ProcessingTimeTrigger:
        return ProcessingTimeTrigger()

    def is_event_time(self) -> bool:
        return False


class GlobalWindows(WindowAssigner[T, GlobalWindow]):
    """One window for everything; only useful with a custom trigger."""

    @staticmethod
    def create() -> GlobalWindows:
        return GlobalWindows()

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> list[GlobalWindow]:
        return [GlobalWindow.get()]

    def get_default_trigger(self, env: Any) -> NeverTrigger:
        return NeverTrigger()

    def get_window_serializer(self) -> GlobalWindowSerializer:
        return GlobalWindowSerializer()

    def __repr__(self) -> str:
        return "GlobalWindows()"

    def is_event_time(self) -> bool:
        return False


class _CountWindows(WindowAssigner[T, CountWindow]):
    """Count windows number elements per key through a keyed counter state."""

    def __init__(self, window_size: int, window_slide: int) -> None:
        if window_size <= 0 or window_slide <= 0:
            raise ValueError("count windows need window_size > 0 and window_slide > 0")
        self._window_size = window_size
        self._window_slide = window_slide
        self._counter_descriptor = ValueStateDescriptor(f"{type(self).__name__}-counter", _long_type())

    def _next_count(self, context: WindowAssigner.WindowAssignerContext) -> int:
        counter = context.get_runtime_context().get_state(self._counter_descriptor)
        count = counter.value() or 0
        counter.update(count + 1)
        return count

    def get_window_serializer(self) -> CountWindowSerializer:
        return CountWindowSerializer()

    def __repr__(self) -> str:
        if self._window_slide == self._window_size and isinstance(self, CountTumblingWindowAssigner):
            return f"{type(self).__name__}({self._window_size})"
        return f"{type(self).__name__}({self._window_size}, {self._window_slide})"

    def is_event_time(self) -> bool:
        return False


class CountTumblingWindowAssigner(_CountWindows[T]):
    def __init__(self, window_size: int) -> None:
        super().__init__(window_size, window_size)

    @staticmethod
    def of(window_size: int) -> CountTumblingWindowAssigner:
        return CountTumblingWindowAssigner(window_size)

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> list[CountWindow]:
        return [CountWindow(self._next_count(context) // self._window_size)]

    def get_default_trigger(self, env: Any) -> Trigger[Any, Any]:  # PurgingTrigger works on any window
        return PurgingTrigger.of(CountTrigger.of(self._window_size))

    def __repr__(self) -> str:
        return f"CountTumblingWindowAssigner({self._window_size})"


class CountSlidingWindowAssigner(_CountWindows[T]):
    @staticmethod
    def of(window_size: int, window_slide: int) -> CountSlidingWindowAssigner:
        return CountSlidingWindowAssigner(window_size, window_slide)

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> list[CountWindow]:
        count = self._next_count(context)
        last_id = count // self._window_slide
        windows = []
        window_id = last_id
        while window_id >= 0 and count - window_id * self._window_slide < self._window_size:
            windows.append(CountWindow(window_id))
            window_id -= 1
        return windows

    def get_default_trigger(self, env: Any) -> Trigger[Any, Any]:  # PurgingTrigger works on any window
        # Each CountWindow id collects its own ``window_size`` elements, then fires once.
        return PurgingTrigger.of(CountTrigger.of(self._window_size))

    def __repr__(self) -> str:
        return f"CountSlidingWindowAssigner({self._window_size}, {self._window_slide})"
