"""Event time in flott.table: watermarks from the DDL, window TVFs and their aggregation.

``WATERMARK FOR ts AS <expr>`` puts a :class:`WatermarkAssigner` after the table's scan (and its
computed columns), as Flink's planner does: each row's timestamp is its rowtime column, and the
watermark is the largest value of ``<expr>`` seen so far, emitted right after a row that moves it
more than ``pipeline.auto-watermark-interval`` (200 ms) past the last one emitted, else on the
periodic tick (Flink's WatermarkAssignerOperator; it starts at 0, so no watermark below the epoch
is emitted). It runs as DataStream ``assign_timestamps_and_watermarks`` with a
``WatermarkStrategy.for_generator`` strategy.

``TABLE(TUMBLE|HOP|CUMULATE|SESSION(...))`` is a :class:`WindowTableFunction`: the input's columns
and ``window_start``, ``window_end`` (TIMESTAMP(3)) and ``window_time`` (the rowtime type, end - 1 ms).
``GROUP BY window_start, window_end[, keys]`` over it is a :class:`WindowAggregate`: a key_by on the
other keys (one constant key at parallelism 1 if there are none) and DataStream event-time windows
(tumbling, sliding, session, and :class:`CumulativeEventTimeWindows`) with the SQL aggregates as
their AggregateFunction; rows too late for every window (window end - 1 <= watermark) are dropped,
and a window emits one ``+I`` row when the watermark passes its end, so the result is append-only.
The TVF's rows on their own (no such GROUP BY) are each row once per window it is in, none dropped
(TUMBLE, HOP, CUMULATE); in batch mode a window aggregation is a group aggregation of those rows.
Times are UTC (flott's Table runtime supports no other local time zone).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Collection, Iterable
from typing import Any

from flott.api.streaming.windowing import (
    EventTimeSessionWindows,
    EventTimeTrigger,
    SlidingEventTimeWindows,
    TimeWindow,
    TimeWindowSerializer,
    TumblingEventTimeWindows,
    WindowAssigner,
)
from flott.common.watermark_strategy import (
    TimestampAssigner,
    WatermarkGenerator,
    WatermarkOutput,
    WatermarkStrategy,
)
from flott.datastream.functions import AggregateFunction, FlatMapFunction, ProcessWindowFunction
from flott.errors import NotYetSupportedError
from flott.table import runtime
from flott.table.plan import Calc, PlanNode, TranslationContext, aggregate_plan, refuse
from flott.table.planner import Rex, calc_source, table_error, validation_error
from flott.table.types import DataType, LocalZonedTimestampType, TimestampType

EPOCH = _dt.datetime(1970, 1, 1)
_MS = _dt.timedelta(milliseconds=1)
WINDOW_COLUMNS = ("window_start", "window_end", "window_time")


def to_millis(value: _dt.datetime) -> int:
    return (value.replace(tzinfo=None) - EPOCH) // _MS


def from_millis(ms: int) -> _dt.datetime:
    return EPOCH + _dt.timedelta(milliseconds=ms)


def is_time_type(t: DataType) -> bool:
    return t.type_root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE")


# --------------------------------------------------------------------------- watermarks


class RowtimeAssigner(TimestampAssigner):
    """A row's event timestamp is its rowtime column, in epoch milliseconds."""

    def __init__(self, index: int) -> None:
        self.index = index

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        v = value[1][self.index]
        if v is None:
            raise RuntimeError(
                "RowTime field should not be null, please convert it to a non-null long value."
            )
        return to_millis(v)


class SqlWatermarkGenerator(WatermarkGenerator):
    """The watermark expression per row; eager emission past the interval, as Flink's operator."""

    def __init__(self, code: runtime.CompiledCode, interval_ms: int) -> None:
        self._calc = code.function()
        self._interval = interval_ms
        self.current = 0
        self.last = 0

    def on_event(self, event: Any, event_timestamp: int, output: WatermarkOutput) -> None:
        wm = self._calc(event[1])[0]
        if wm is not None:
            ms = to_millis(wm)
            if ms > self.current:
                self.current = ms
        if self.current - self.last > self._interval:
            self.last = self.current
            output.emit_watermark(self.current)

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        if self.current > self.last:
            self.last = self.current
            output.emit_watermark(self.current)


class SqlWatermarkGenerators:
    """The picklable supplier of one generator per subtask (the compiled expression travels as source)."""

    def __init__(self, code: runtime.CompiledCode, interval_ms: int) -> None:
        self.code, self.interval_ms = code, interval_ms

    def __call__(self) -> SqlWatermarkGenerator:
        return SqlWatermarkGenerator(self.code, self.interval_ms)


class WatermarkAssigner(PlanNode):
    """``WATERMARK FOR <rowtime> AS <expression>`` after a table's scan."""

    def __init__(self, input: PlanNode, rowtime: int, watermark: Rex, interval_ms: int) -> None:
        t = input.types[rowtime]
        if not is_time_type(t) or getattr(t, "precision", 3) > 3:
            raise validation_error(
                "Invalid data type of time field for watermark definition. The field must be of type "
                f"TIMESTAMP(p) or TIMESTAMP_LTZ(p), the supported precision 'p' is from 0 to 3, but the "
                f"time field type is {t}"
            )
        if not is_time_type(watermark.type):
            raise validation_error(
                f"Invalid data type of expression for watermark definition. The field must be of type "
                f"TIMESTAMP(p) or TIMESTAMP_LTZ(p), but the expression type is {watermark.type}"
            )
        self.input, self.watermark, self.interval_ms = input, watermark, interval_ms
        self.names, self.types = list(input.names), list(input.types)
        self.rowtime = self.rowtime_index = rowtime

    def is_updating(self, streaming: bool) -> bool:
        return self.input.is_updating(streaming)

    def _translate(self, ctx: TranslationContext) -> Any:
        consts: list[Any] = []
        code = runtime.CompiledCode(calc_source([self.watermark], None, consts, []), consts)
        strategy = WatermarkStrategy.for_generator(
            SqlWatermarkGenerators(code, self.interval_ms)
        ).with_timestamp_assigner(RowtimeAssigner(self.rowtime_index))
        upstream = self.input.translate(ctx)
        out = upstream.assign_timestamps_and_watermarks(strategy).name("WatermarkAssigner")
        return ctx.uid(out.set_parallelism(upstream.transformation.parallelism), "watermark-assigner")


# --------------------------------------------------------------------------- window TVFs


class CumulativeEventTimeWindows(WindowAssigner[Any, TimeWindow]):
    """CUMULATE: windows of one start growing by ``step`` up to ``size`` (``[s, s+step)``,
    ``[s, s+2*step)``, ... ``[s, s+size)``); an element is in each of them that ends after it."""

    def __init__(self, size: int, step: int) -> None:
        if step <= 0 or size % step:
            raise validation_error("CUMULATE's max size must be a multiple of its step")
        self.size, self.step = size, step

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssigner.WindowAssignerContext
    ) -> Collection[TimeWindow]:
        start = TimeWindow.get_window_start_with_offset(timestamp, 0, self.size)
        return [
            TimeWindow(start, end)
            for end in range(start + self.step, start + self.size + 1, self.step)
            if end > timestamp
        ]

    def get_default_trigger(self, env: Any) -> EventTimeTrigger:
        return EventTimeTrigger()

    def get_window_serializer(self) -> TimeWindowSerializer:
        return TimeWindowSerializer()

    def is_event_time(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"CumulativeEventTimeWindows({self.size}, {self.step})"


class WindowSpec:
    """A window TVF's kind and intervals, in Flink's argument order (HOP: slide, size; CUMULATE:
    step, max size)."""

    def __init__(self, kind: str, intervals_ms: list[int], partition_keys: list[int] | None = None) -> None:
        self.kind, self.intervals_ms, self.partition_keys = kind, intervals_ms, partition_keys or []
        if kind == "HOP" and intervals_ms[1] % intervals_ms[0]:
            raise validation_error("HOP window requires size must be an integral multiple of slide")

    def assigner(self) -> WindowAssigner[Any, TimeWindow]:
        v = self.intervals_ms
        if self.kind == "TUMBLE":
            return TumblingEventTimeWindows(v[0])
        if self.kind == "HOP":
            return SlidingEventTimeWindows(v[1], v[0])
        if self.kind == "CUMULATE":
            return CumulativeEventTimeWindows(v[1], v[0])
        if self.kind == "SESSION":
            return EventTimeSessionWindows(v[0])
        raise refuse(f"the window kind {self.kind}")


class WindowTableFunction(PlanNode):
    """The rows of ``input`` with the window columns of a window TVF."""

    def __init__(self, input: PlanNode, time_index: int, spec: WindowSpec) -> None:
        if input.rowtime != time_index:
            raise validation_error(
                "The window function requires the timecol is a time attribute type, but is "
                f"{input.types[time_index]}."
            )
        if input.is_updating(True):
            raise NotYetSupportedError("a window TVF over an updating table is not yet supported by flott")
        self.input, self.time_index, self.spec = input, time_index, spec
        time_type = input.types[time_index]
        window_time: DataType = (
            LocalZonedTimestampType(3, False)
            if isinstance(time_type, LocalZonedTimestampType)
            else TimestampType(3, False)
        )
        self.names = list(input.names) + list(WINDOW_COLUMNS)
        self.types = [*input.types, TimestampType(3, False), TimestampType(3, False), window_time]

    def _translate(self, ctx: TranslationContext) -> Any:
        """Each row once per window it is in, with the window's columns (no row is dropped as late:
        as Flink's WindowTableFunction). SESSION windows exist only once rows are merged into them."""
        if self.spec.kind == "SESSION":
            raise refuse(
                "a SESSION window TVF whose rows are not aggregated by GROUP BY window_start, window_end"
            )
        upstream = self.input.translate(ctx)
        fn = WindowColumns(self.spec.assigner(), self.time_index)
        out = upstream.flat_map(fn).name("WindowTableFunction")
        return ctx.uid(out.set_parallelism(upstream.transformation.parallelism), "window-table-function")


class WindowColumns(FlatMapFunction):
    """A row with window_start, window_end, window_time appended, once per window of its time."""

    def __init__(self, assigner: WindowAssigner[Any, TimeWindow], time_index: int) -> None:
        self.assigner, self.time_index = assigner, time_index

    def flat_map(self, value: Any) -> Iterable[Any]:
        kind, vals = value
        t = vals[self.time_index]
        if t is None:
            return
        for w in self.assigner.assign_windows(value, to_millis(t), None):  # type: ignore[arg-type]
            yield (kind, (*vals, from_millis(w.start), from_millis(w.end), from_millis(w.end - 1)))


def input_refs(rex: Rex) -> Iterable[int]:
    """The input columns ``rex`` reads."""
    if rex.kind == "input":
        yield rex.index
    for o in rex.operands:
        yield from input_refs(o)


class WindowAggregate(PlanNode):
    """``GROUP BY window_start, window_end[, keys]`` over a window TVF: the group keys in the order
    they were written (window columns among them), then the aggregates."""

    def __init__(
        self,
        tvf: WindowTableFunction,
        key_rexes: list[Rex],
        agg_rexes: list[Rex],
        names: list[str],
        types: list[DataType],
    ) -> None:
        width = len(tvf.input.names)
        self.layout: list[tuple[str, int]] = []  # per group key: ("key", i) or (window column, 0)
        plain: list[Rex] = []
        for r in key_rexes:
            if r.kind == "input" and r.index >= width:
                self.layout.append((WINDOW_COLUMNS[r.index - width], 0))
            elif any(i >= width for i in input_refs(r)):
                raise refuse("a GROUP BY expression over window columns")
            else:
                self.layout.append(("key", len(plain)))
                plain.append(r)
        for a in agg_rexes:
            if any(i >= width for i in input_refs(a)):
                raise refuse("an aggregate of window_start, window_end or window_time")
        keys = [r.index for r in plain if r.kind == "input"]
        if tvf.spec.kind == "SESSION" and sorted(keys) != sorted(tvf.spec.partition_keys):
            if tvf.spec.partition_keys or plain:
                raise refuse("a SESSION window grouped by keys other than its PARTITION BY keys")
        plan = aggregate_plan(tvf.input, plain, agg_rexes, [f"$k{i}" for i in range(len(plain))], [])
        self.pre: Calc = plan.input  # type: ignore[assignment]
        self.specs = plan.specs
        self.key_count = len(plain)
        self.tvf = tvf
        self.names, self.types = names, types

    def _translate(self, ctx: TranslationContext) -> Any:
        if not ctx.streaming:
            raise refuse("a window aggregation in batch mode")
        if self.tvf.spec.kind == "SESSION" and any(getattr(s.udaf, "vectorized", False) for s in self.specs):
            raise table_error("Session Group Window is currently not supported for Pandas UDAF.")  # PyFlink's
        ds = self.pre.translate(ctx)
        if self.key_count:
            keyed = ds.key_by(runtime.TupleKeySelector(tuple(range(self.key_count))))
        else:
            keyed = ds.key_by(runtime.ConstantKey())
        windowed = keyed.window(self.tvf.spec.assigner())
        out = windowed.aggregate(
            WindowAccumulators(self.specs),
            window_function=WindowRows(self.layout, bool(self.key_count)),
        ).name("WindowAggregate")
        if not self.key_count:
            out = out.set_parallelism(1)
        return ctx.uid(out, "window-aggregate")


class WindowAccumulators(AggregateFunction):
    """The SQL aggregates of one window (the group aggregation's accumulators)."""

    def __init__(self, specs: list[runtime.AggSpec]) -> None:
        self.specs = specs

    def create_accumulator(self) -> list[runtime.Accumulator]:
        return [s.create() for s in self.specs]

    def add(self, value: Any, accumulator: list[runtime.Accumulator]) -> list[runtime.Accumulator]:
        vals = value[1]
        for s, a in zip(self.specs, accumulator, strict=True):
            a.accumulate(s.read(vals))
        return accumulator

    def get_result(self, accumulator: list[runtime.Accumulator]) -> tuple[Any, ...]:
        return tuple(a.value() for a in accumulator)

    def merge(self, a: list[runtime.Accumulator], b: list[runtime.Accumulator]) -> list[runtime.Accumulator]:
        for x, y in zip(a, b, strict=True):
            x.merge(y)
        return a


class WindowRows(ProcessWindowFunction):
    """One ``+I`` row per key and window: the group keys (window columns filled in), the aggregates."""

    def __init__(self, layout: list[tuple[str, int]], keyed: bool) -> None:
        self.layout, self.keyed = layout, keyed

    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        window = context.window()
        keys = key if self.keyed else ()
        head = []
        for what, i in self.layout:
            if what == "key":
                head.append(keys[i])
            elif what == "window_start":
                head.append(from_millis(window.start))
            elif what == "window_end":
                head.append(from_millis(window.end))
            else:
                head.append(from_millis(window.end - 1))
        for result in elements:
            yield (0, tuple(head) + result)
