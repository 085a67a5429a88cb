"""The window operator (Flink's ``WindowOperator``): keyed windows, their triggers and their timers.

Per element: the assigner names the windows it falls into (session windows
are first merged with the key's in-flight windows); a window already past its
cleanup time (end + allowed lateness, in event time) is skipped; otherwise the
element is added to the window's contents and the trigger is asked whether to
fire (run the window function on the contents) and/or purge (drop them). An
element that fell into no live window is *late*: it goes to the late-data side
output if one was set, else it is dropped.

Per timer (event time when a watermark passes, processing time on the wall
clock): the trigger decides again, and at the window's cleanup time all its
state goes (contents, trigger state, the window function's per-window state).

Window results carry ``window.max_timestamp()`` as their timestamp, as in
Flink. Everything the operator keeps (contents, merging-window sets, trigger
state, timers, count-window counters) is keyed state in its backend.

Triggers see the generic TriggerContext, so user triggers work unchanged. The
most common shape (tumbling or sliding event-time windows with their default
EventTimeTrigger) has its own per-element loop that does what that trigger
would, inline: window arithmetic without the assigner call, one cached window
object per window start, and timers registered only when a (key, window)
gets its first element (until the window is cleaned up its timers stay
registered, so registering again would be a no-op anyway). Tumbling windows
get a loop of their own (one window per element: no loop over windows, the
previous element's window reused), and both loops fold an element straight
into the stored value with the user's ``add``/``reduce`` (``WindowContents.fold``).
Their timers fire through an inlined EventTimeTrigger too (:meth:`WindowOperator.on_event_time`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flott.api.common.output_tag import OutputTag
from flott.api.common.state import (
    AggregatingStateDescriptor,
    KeyedStateStore,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from flott.api.streaming.functions import ProcessWindowFunction
from flott.api.streaming.windowing import (
    EventTimeTrigger,
    MergingWindowAssigner,
    SlidingEventTimeWindows,
    TimeWindow,
    Trigger,
    TriggerResult,
    TumblingEventTimeWindows,
    WindowAssigner,
)
from flott.errors import FlottError, InvalidJobGraphError
from flott.runtime.operators.specs import WindowOperatorSpec
from flott.runtime.operators.stateless_operators import without_side_outputs
from flott.runtime.operators.stream_operator import (
    OperatorSetup,
    StreamOperator,
    close_user_function,
    open_user_function,
    user_method,
)
from flott.runtime.operators.timer_service import InternalTimerService
from flott.runtime.operators.watermark import LONG_MAX, LONG_MIN
from flott.runtime.operators.windowing.merging_window_set import MergingWindowSet
from flott.runtime.operators.windowing.window_contents import (
    AggregatingContents,
    ListContents,
    ReducingContents,
    WindowContents,
)
from flott.runtime.operators.windowing.window_functions import InternalWindowFunction, create_window_function
from flott.runtime.state.backend import KeyedStateBackend

MERGING_WINDOW_SET_STATE = "merging-window-set"

_FIRE = TriggerResult.FIRE
_CONTINUE = TriggerResult.CONTINUE
_ABSENT = object()
_WINDOW_CACHE_LIMIT = 1 << 12

NO_TIMESTAMP_MESSAGE = (
    "Record has no timestamp. Is the time characteristic set to 'ProcessingTime', or did you "
    "forget to call 'data_stream.assign_timestamps_and_watermarks(...)'?"
)


# --------------------------------------------------------------------------- contexts


def namespaced_state(backend: KeyedStateBackend, descriptor: Any) -> Any:
    """The namespaced state object for a PyFlink state descriptor (scoped by the backend's namespace)."""
    if isinstance(descriptor, ValueStateDescriptor):
        return backend.get_namespaced_value_state(descriptor)
    if isinstance(descriptor, ListStateDescriptor):
        return backend.get_namespaced_list_state(descriptor)
    if isinstance(descriptor, MapStateDescriptor):
        return backend.get_namespaced_map_state(descriptor)
    if isinstance(descriptor, ReducingStateDescriptor):
        return backend.get_namespaced_reducing_state(descriptor)
    if isinstance(descriptor, AggregatingStateDescriptor):
        return backend.get_namespaced_aggregating_state(descriptor)
    raise TypeError(f"unsupported state descriptor {type(descriptor).__name__}")


class WindowTriggerContext(Trigger.OnMergeContext):
    """What a Trigger sees: time, timers and state of the current key and :attr:`window`."""

    def __init__(self, operator: WindowOperator) -> None:
        self._op = operator
        self._backend = operator.backend
        self._timers = operator.timers
        self.window: Any = None
        self.merged_windows: list[Any] = []

    def get_current_processing_time(self) -> int:
        return self._timers.current_processing_time()

    def get_metric_group(self) -> Any:
        """The window operator's metric group, as Flink's TriggerContext gives it."""
        return self._op.runtime_context.get_metrics_group()

    def get_current_watermark(self) -> int:
        return self._timers.current_watermark

    def register_processing_time_timer(self, time: int) -> None:
        self._timers.register_processing_time_timer(self.window, time)

    def register_event_time_timer(self, time: int) -> None:
        self._timers.register_event_time_timer(self.window, time)

    def delete_processing_time_timer(self, time: int) -> None:
        self._timers.delete_processing_time_timer(self.window, time)

    def delete_event_time_timer(self, time: int) -> None:
        self._timers.delete_event_time_timer(self.window, time)

    def get_partitioned_state(self, state_descriptor: Any) -> Any:
        self._backend.current_namespace = self.window
        return namespaced_state(self._backend, state_descriptor)

    def merge_partitioned_state(self, state_descriptor: Any) -> None:
        state = self.get_partitioned_state(state_descriptor)
        merge = getattr(state, "merge_namespaces", None)
        if merge is None:
            raise FlottError(f"state '{state_descriptor.get_name()}' cannot be merged (not a merging state)")
        if self.merged_windows:
            merge(self.window, self.merged_windows)


class _WindowStateStore(KeyedStateStore):
    """``context.window_state()``: keyed state scoped to the window being processed."""

    def __init__(self, backend: KeyedStateBackend) -> None:
        self._backend = backend

    def get_state(self, state_descriptor: Any) -> Any:
        return self._backend.get_namespaced_value_state(state_descriptor)

    def get_list_state(self, state_descriptor: Any) -> Any:
        return self._backend.get_namespaced_list_state(state_descriptor)

    def get_map_state(self, state_descriptor: Any) -> Any:
        return self._backend.get_namespaced_map_state(state_descriptor)

    def get_reducing_state(self, state_descriptor: Any) -> Any:
        return self._backend.get_namespaced_reducing_state(state_descriptor)

    def get_aggregating_state(self, state_descriptor: Any) -> Any:
        return self._backend.get_namespaced_aggregating_state(state_descriptor)


class WindowProcessContext(ProcessWindowFunction.Context):
    """The context of a (all-)ProcessWindowFunction: the window, time, per-window and global state."""

    def __init__(self, operator: WindowOperator, global_state: KeyedStateStore) -> None:
        self._op = operator
        self._global_state = global_state
        self._window_state = _WindowStateStore(operator.backend)
        self.current_window: Any = None
        self.out: list[Any] | None = None

    def window(self) -> Any:
        return self.current_window

    def current_processing_time(self) -> int:
        return self._op.timers.current_processing_time()

    def current_watermark(self) -> int:
        return self._op.timers.current_watermark

    def window_state(self) -> KeyedStateStore:
        return self._window_state

    def global_state(self) -> KeyedStateStore:
        return self._global_state

    def output(self, output_tag: OutputTag, value: Any) -> None:
        """Emit to a side output (same as yielding ``(output_tag, value)``)."""
        if self.out is None:
            raise RuntimeError("output() is only available while the window function runs")
        self.out.append(((output_tag, value), self.current_window.max_timestamp()))


class _AssignerContext(WindowAssigner.WindowAssignerContext):
    def __init__(self, operator: WindowOperator) -> None:
        self._op = operator

    def get_current_processing_time(self) -> int:
        return self._op.timers.current_processing_time()

    def get_runtime_context(self) -> Any:
        return self._op.runtime_context


# --------------------------------------------------------------------------- the operator


def _contents_for(spec: WindowOperatorSpec, backend: KeyedStateBackend) -> WindowContents:
    if spec.function_kind == "reduce":
        if spec.reduce_function is None:
            raise InvalidJobGraphError("window reduce without a reduce function")
        return ReducingContents(
            backend, user_method(spec.reduce_function, "reduce", "window reduce function")
        )
    if spec.function_kind == "aggregate":
        if spec.aggregate_function is None:
            raise InvalidJobGraphError("window aggregate without an AggregateFunction")
        return AggregatingContents(backend, spec.aggregate_function)
    return ListContents(backend)


class WindowOperator(StreamOperator):
    """``window(...)`` / ``window_all(...)`` followed by reduce, aggregate, apply or process."""

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._setup = setup
        spec = setup.load_function(setup.descriptor.function, "window")
        if not isinstance(spec, WindowOperatorSpec):
            raise InvalidJobGraphError(
                f"window operator '{self.name}' got {type(spec).__name__}, not a window"
            )
        self.spec = spec
        self._key_object, self._key = setup.key_selector()
        self.backend: KeyedStateBackend = setup.keyed_state_backend()
        self.timers = InternalTimerService("window-timers", self.backend, setup.processing_time_service, self)
        self.assigner = spec.assigner
        self.trigger: Trigger = (
            spec.trigger if spec.trigger is not None else self.assigner.get_default_trigger(None)
        )
        self.is_event_time = bool(self.assigner.is_event_time())
        self.merging = isinstance(self.assigner, MergingWindowAssigner)
        self.allowed_lateness = int(spec.allowed_lateness_ms) if self.is_event_time else 0
        self.late_data_tag: OutputTag | None = spec.late_data_tag
        self.contents = _contents_for(spec, self.backend)
        self.window_function: InternalWindowFunction = create_window_function(spec)
        self._timestamped = setup.timestamped_input
        self._keep_side_outputs = bool(setup.side_output_tags)
        self._batch_size = setup.batch_size
        self.runtime_context = setup.runtime_context(self.backend)
        self.trigger_context = WindowTriggerContext(self)
        self.process_context = WindowProcessContext(self, self.runtime_context)
        self._assigner_context = _AssignerContext(self)
        self._assign = self.assigner.assign_windows
        self._merging_sets = self.backend.state_table(MERGING_WINDOW_SET_STATE) if self.merging else None
        self._timer_out: list[Any] = []
        self.num_late_records_dropped = 0
        self.fast_path = (
            not self.merging
            and self._timestamped
            and type(self.trigger) is EventTimeTrigger
            and type(self.assigner) in (TumblingEventTimeWindows, SlidingEventTimeWindows)
        )
        """Tumbling/sliding event-time windows with the default trigger: the inline per-element loop."""
        if self.fast_path:
            self._size: int = self.assigner._size
            self._slide: int = getattr(self.assigner, "_slide", self._size)
            self._offset: int = self.assigner._offset
            self._windows: dict[int, TimeWindow] = {}

    def open(self) -> None:
        open_user_function(self._key_object, self.runtime_context)
        self.window_function.open(self.runtime_context)

    # --- time helpers ---------------------------------------------------------------------------

    def cleanup_time(self, window: Any) -> int:
        """When a window's state goes: its end plus the allowed lateness (event time), its end otherwise."""
        max_timestamp: int = window.max_timestamp()
        if self.is_event_time:
            time = max_timestamp + self.allowed_lateness
            return time if time >= max_timestamp and time <= LONG_MAX else LONG_MAX
        return max_timestamp

    def _register_cleanup_timer(self, window: Any) -> None:
        time = self.cleanup_time(window)
        if time == LONG_MAX:
            return  # GlobalWindow: never cleaned up
        if self.is_event_time:
            self.timers.register_event_time_timer(window, time)
        else:
            self.timers.register_processing_time_timer(window, time)

    def _delete_cleanup_timer(self, window: Any) -> None:
        time = self.cleanup_time(window)
        if time == LONG_MAX:
            return
        if self.is_event_time:
            self.timers.delete_event_time_timer(window, time)
        else:
            self.timers.delete_processing_time_timer(window, time)

    def _is_window_late(self, window: Any) -> bool:
        return self.is_event_time and self.cleanup_time(window) <= self.timers.current_watermark

    # --- elements -------------------------------------------------------------------------------

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        if self.fast_path:
            return self._process_batch_fast(batch)
        out: list[Any] = []
        key_of = self._key
        backend = self.backend
        process_element = self._process_merging if self.merging else self._process_element
        if self._timestamped:
            for value, ts in batch:
                key = key_of(value)
                backend.current_key = key
                process_element(value, LONG_MIN if ts is None else ts, ts, key, out)
        else:
            for value in batch:
                key = key_of(value)
                backend.current_key = key
                process_element(value, LONG_MIN, None, key, out)
        if self._keep_side_outputs:
            return out
        return without_side_outputs(out, True)

    def _process_batch_fast(self, batch: Iterable[Any]) -> list[Any]:
        """Tumbling/sliding event-time windows with EventTimeTrigger: what the generic path does, inlined."""
        windows = self._windows
        if len(windows) > _WINDOW_CACHE_LIMIT:
            windows.clear()
        out: list[Any] = []
        if self._slide == self._size:
            self._tumbling_loop(batch, out)
        else:
            self._sliding_loop(batch, out)
        if self._keep_side_outputs:
            return out
        return without_side_outputs(out, True)

    def _tumbling_loop(self, batch: Iterable[Any], out: list[Any]) -> None:
        """The per-element loop of tumbling windows: one window per element, no loop over windows.

        Window ``[start, start + size)`` is live while ``start + size - 1 + lateness > watermark``
        (``start > live_after``) and fires at once (late, within the allowed lateness) when
        ``start + size - 1 <= watermark`` (``start <= fire_upto``). Timers are registered when a
        (key, window) gets its first element; until the window is cleaned up they stay.
        """
        key_of = self._key
        backend = self.backend
        contents = self.contents
        table = contents.table
        first = contents.first
        fold = contents.fold
        value_first = contents.fold_value_first
        add_timer = self.timers.event_time_timers.add
        watermark = self.timers.current_watermark
        lateness = self.allowed_lateness
        size, offset = self._size, self._offset
        live_after = watermark - size + 1 - lateness
        fire_upto = watermark - size + 1
        windows = self._windows
        absent = _ABSENT
        window_start: Any = None  # the start of ``window``, the previous element's window
        window: Any = None
        ts: Any = 0
        try:
            for value, ts in batch:
                # A missing timestamp fails here (TypeError), before user code sees the element.
                start = ts - (ts - offset) % size
                key = key_of(value)
                backend.current_key = key
                if start <= live_after:  # past its cleanup time: late
                    self._late(value, ts, ts, out)
                    continue
                if start != window_start:
                    window = windows.get(start)
                    if window is None:
                        window = windows[start] = TimeWindow(start, start + size)
                    window_start = start
                try:
                    inner = table[key]
                    data = inner[window]
                except KeyError:
                    data = absent
                if data is absent:
                    inner = table.get(key)
                    if inner is None:
                        inner = table[key] = {}
                    inner[window] = first(value)
                    max_ts = start + size - 1
                    if max_ts > watermark:
                        add_timer(max_ts, key, window)
                    if lateness:
                        add_timer(max_ts + lateness, key, window)
                elif value_first:
                    inner[window] = fold(value, data)
                else:
                    inner[window] = fold(data, value)
                if start <= fire_upto:  # late but within the allowed lateness: fires at once
                    result = contents.get(key, window)
                    if result is not None:
                        self._emit(key, window, result, out)
        except TypeError:
            if ts is None:
                raise FlottError(NO_TIMESTAMP_MESSAGE) from None
            raise

    def _sliding_loop(self, batch: Iterable[Any], out: list[Any]) -> None:
        """The per-element loop of sliding windows: each of the element's windows, latest first."""
        key_of = self._key
        backend = self.backend
        contents = self.contents
        table = contents.table
        first = contents.first
        fold = contents.fold
        value_first = contents.fold_value_first
        add_timer = self.timers.event_time_timers.add
        watermark = self.timers.current_watermark
        lateness = self.allowed_lateness
        size, slide, offset = self._size, self._slide, self._offset
        live_after = watermark - size + 1 - lateness
        fire_upto = watermark - size + 1
        windows = self._windows
        absent = _ABSENT
        ts: Any = 0
        try:
            for value, ts in batch:
                start = ts - (ts - offset + slide) % slide
                key = key_of(value)
                backend.current_key = key
                end_before = ts - size
                skipped = True
                while start > end_before:
                    if start <= live_after:  # this window and every earlier one are past their cleanup
                        break
                    skipped = False
                    window = windows.get(start)
                    if window is None:
                        window = windows[start] = TimeWindow(start, start + size)
                    try:
                        inner = table[key]
                        data = inner[window]
                    except KeyError:
                        data = absent
                    if data is absent:
                        inner = table.get(key)
                        if inner is None:
                            inner = table[key] = {}
                        inner[window] = first(value)
                        max_ts = start + size - 1
                        if max_ts > watermark:
                            add_timer(max_ts, key, window)
                        if lateness:
                            add_timer(max_ts + lateness, key, window)
                    elif value_first:
                        inner[window] = fold(value, data)
                    else:
                        inner[window] = fold(data, value)
                    if start <= fire_upto:
                        result = contents.get(key, window)
                        if result is not None:
                            self._emit(key, window, result, out)
                    start -= slide
                if skipped:
                    self._late(value, ts, ts, out)
        except TypeError:
            if ts is None:
                raise FlottError(NO_TIMESTAMP_MESSAGE) from None
            raise

    def _late(self, value: Any, timestamp: int, record_ts: int | None, out: list[Any]) -> None:
        if self.is_event_time and timestamp + self.allowed_lateness <= self.timers.current_watermark:
            if self.late_data_tag is not None:
                out.append(((self.late_data_tag, value), record_ts))
            else:
                self.num_late_records_dropped += 1

    def _process_element(
        self, value: Any, timestamp: int, record_ts: int | None, key: Any, out: list[Any]
    ) -> None:
        windows = self._assign(value, timestamp, self._assigner_context)
        skipped = True
        contents = self.contents
        trigger = self.trigger
        ctx = self.trigger_context
        backend = self.backend
        for window in windows:
            if self._is_window_late(window):
                continue
            skipped = False
            contents.add(key, window, value)
            ctx.window = window
            backend.current_namespace = window
            result = trigger.on_element(value, timestamp, window, ctx)
            if result is not _CONTINUE:
                if result.is_fire():
                    data = contents.get(key, window)
                    if data is not None:
                        self._emit(key, window, data, out)
                if result.is_purge():
                    contents.clear(key, window)
            self._register_cleanup_timer(window)
        if skipped:
            self._late(value, timestamp, record_ts, out)

    def _merging_window_set(self, key: Any) -> MergingWindowSet:
        assert self._merging_sets is not None
        mapping = self._merging_sets.get(key)
        if mapping is None:
            mapping = self._merging_sets[key] = {}
        return MergingWindowSet(self.assigner, mapping)

    def _drop_empty_merging_set(self, key: Any) -> None:
        assert self._merging_sets is not None
        if not self._merging_sets.get(key, True):
            del self._merging_sets[key]

    def _process_merging(
        self, value: Any, timestamp: int, record_ts: int | None, key: Any, out: list[Any]
    ) -> None:
        windows = self._assign(value, timestamp, self._assigner_context)
        skipped = True
        contents = self.contents
        trigger = self.trigger
        ctx = self.trigger_context
        backend = self.backend
        window_set = self._merging_window_set(key)

        def merge(result: Any, merged: list[Any], state_window: Any, merged_state_windows: list[Any]) -> None:
            if (
                self.is_event_time
                and result.max_timestamp() + self.allowed_lateness <= self.timers.current_watermark
            ):
                raise FlottError(
                    "The end timestamp of an event-time window cannot become earlier than the current "
                    f"watermark by merging. Current watermark: {self.timers.current_watermark} "
                    f"window: {result}"
                )
            if not self.is_event_time and result.max_timestamp() <= self.timers.current_processing_time():
                raise FlottError(
                    "The end timestamp of a processing-time window cannot become earlier than the current "
                    f"processing time by merging. Current processing time: "
                    f"{self.timers.current_processing_time()} window: {result}"
                )
            ctx.window = result
            ctx.merged_windows = merged
            backend.current_namespace = result
            trigger.on_merge(result, ctx)
            ctx.merged_windows = []
            for window in merged:
                ctx.window = window
                backend.current_namespace = window
                trigger.clear(window, ctx)
                self._delete_cleanup_timer(window)
            contents.merge_namespaces(key, state_window, merged_state_windows)

        for window in windows:
            actual = window_set.add_window(window, merge)
            if self._is_window_late(actual):
                window_set.retire_window(actual)
                continue
            skipped = False
            state_window = window_set.get_state_window(actual)
            if state_window is None:
                raise FlottError(f"Window {actual} is not in in-flight window set.")
            contents.add(key, state_window, value)
            ctx.window = actual
            backend.current_namespace = actual
            result = trigger.on_element(value, timestamp, actual, ctx)
            if result is not _CONTINUE:
                if result.is_fire():
                    data = contents.get(key, state_window)
                    if data is not None:
                        self._emit(key, actual, data, out)
                if result.is_purge():
                    contents.clear(key, state_window)
            self._register_cleanup_timer(actual)
        self._drop_empty_merging_set(key)
        if skipped:
            self._late(value, timestamp, record_ts, out)

    def _emit(self, key: Any, window: Any, contents: Any, out: list[Any]) -> None:
        ctx = self.process_context
        ctx.current_window = window
        ctx.out = out
        self.backend.current_namespace = window
        produced = self.window_function.process(key, window, ctx, contents)
        ctx.out = None
        if produced is not None:
            timestamp = window.max_timestamp()
            out.extend([(result, timestamp) for result in produced])

    # --- timers ---------------------------------------------------------------------------------

    def _on_timer(self, timestamp: int, key: Any, window: Any, event_time: bool) -> None:
        window_set = None
        if self.merging:
            window_set = self._merging_window_set(key)
            state_window = window_set.get_state_window(window)
            if state_window is None:
                # The window was merged away or cleaned up; its trigger should have deleted this timer.
                self._drop_empty_merging_set(key)
                return
        else:
            state_window = window
        ctx = self.trigger_context
        ctx.window = window
        self.backend.current_namespace = window
        if event_time:
            result = self.trigger.on_event_time(timestamp, window, ctx)
        else:
            result = self.trigger.on_processing_time(timestamp, window, ctx)
        out = self._timer_out
        if result.is_fire():
            data = self.contents.get(key, state_window)
            if data is not None:
                self._emit(key, window, data, out)
        if result.is_purge():
            self.contents.clear(key, state_window)
        if event_time == self.is_event_time and timestamp == self.cleanup_time(window):
            self._clear_all_state(key, window, state_window, window_set)
        if window_set is not None:
            self._drop_empty_merging_set(key)
        if len(out) >= self._batch_size:
            self._flush_timer_output()

    def _clear_all_state(
        self, key: Any, window: Any, state_window: Any, window_set: MergingWindowSet | None
    ) -> None:
        self.contents.clear(key, state_window)
        ctx = self.trigger_context
        ctx.window = window
        self.backend.current_namespace = window
        self.trigger.clear(window, ctx)
        process_context = self.process_context
        process_context.current_window = window
        self.window_function.clear(window, process_context)
        if window_set is not None:
            window_set.retire_window(window)

    def on_event_time(self, timestamp: int, key: Any, namespace: Any) -> None:
        if not self.fast_path:
            self._on_timer(timestamp, key, namespace, True)
            return
        # EventTimeTrigger, inlined: fire at the window's max timestamp; at its cleanup time clear
        # the contents, the trigger's timer (EventTimeTrigger.clear) and the function's window state.
        window = namespace
        max_ts = window[1] - 1
        out = self._timer_out
        if timestamp == max_ts:
            data = self.contents.get(key, window)
            if data is not None:
                self._emit(key, window, data, out)
        if timestamp == self.cleanup_time(window):
            self.contents.clear(key, window)
            if timestamp != max_ts:
                self.timers.event_time_timers.remove(max_ts, key, window)
            self.backend.current_namespace = window
            process_context = self.process_context
            process_context.current_window = window
            self.window_function.clear(window, process_context)
        if len(out) >= self._batch_size:
            self._flush_timer_output()

    def on_processing_time(self, timestamp: int, key: Any, namespace: Any) -> None:
        self._on_timer(timestamp, key, namespace, False)
        self._flush_timer_output()

    def _flush_timer_output(self) -> None:
        out, self._timer_out = self._timer_out, []
        if out:
            if not self._keep_side_outputs:
                out = without_side_outputs(out, True)
            if out:
                self.output.collect(out)

    def process_watermark(self, timestamp: int) -> None:
        self.current_watermark = timestamp
        self.timers.advance_watermark(timestamp)
        self._flush_timer_output()
        self.output.emit_watermark(timestamp)

    def close(self) -> None:
        try:
            self.timers.close()
            self.window_function.close()
            close_user_function(self._key_object)
        finally:
            self.backend.dispose()
