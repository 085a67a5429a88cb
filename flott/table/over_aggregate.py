"""OVER aggregations on event time: ``agg(x) OVER (PARTITION BY .. ORDER BY rowtime <frame>)``.

As Flink's RowTime{Rows,Range}{Unbounded,Bounded}PrecedingFunction: a row waits in keyed state until
the watermark passes its timestamp (a row at or behind the watermark when it arrives is late and
dropped), then the rows of that timestamp are emitted in arrival order, each with its aggregates:
ROWS UNBOUNDED PRECEDING counts the rows before it and itself; RANGE UNBOUNDED PRECEDING all rows
up to its timestamp (its peers too); RANGE INTERVAL 'n' PRECEDING the rows whose timestamps are
within n of its own; ROWS n PRECEDING the row and the n rows before it (the Table API's
``row_interval(n)``). Always append-only (``+I``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flott.datastream.functions import KeyedProcessFunction
from flott.datastream.state import ValueStateDescriptor
from flott.errors import NotYetSupportedError
from flott.table import runtime
from flott.table.plan import PlanNode, TranslationContext
from flott.table.types import DataType


class OverFrame:
    """``ROWS``/``RANGE`` from ``preceding`` (``None``: unbounded; else milliseconds for RANGE, a
    row count for ROWS) to the current row."""

    def __init__(self, kind: str, preceding: int | None) -> None:
        if preceding is not None and preceding < 0:
            raise NotYetSupportedError(f"{kind} frames with a negative preceding bound ({preceding})")
        self.kind, self.preceding = kind, preceding

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OverFrame) and (self.kind, self.preceding) == (other.kind, other.preceding)

    def __hash__(self) -> int:
        return hash((self.kind, self.preceding))


class OverAggregate(PlanNode):
    """The first ``width`` columns of its input (a Calc that appends the aggregates' arguments),
    then one column per aggregate."""

    def __init__(
        self,
        input: PlanNode,
        width: int,
        partition: list[int],
        frame: OverFrame,
        specs: list[runtime.AggSpec],
        names: list[str],
        types: list[DataType],
    ) -> None:
        self.input, self.width, self.partition, self.frame, self.specs = input, width, partition, frame, specs
        self.names = list(input.names[:width]) + names
        self.types = list(input.types[:width]) + types
        self.rowtime = input.rowtime

    def _translate(self, ctx: TranslationContext) -> Any:
        if not ctx.streaming:
            raise NotYetSupportedError("OVER aggregations in batch mode are not yet supported by flott")
        if self.input.is_updating(True):
            raise NotYetSupportedError("an OVER aggregation of an updating input is not supported")
        if ctx.state_ttl_ms > 0:  # Flink cleans an idle partition's over state up by timers then
            raise NotYetSupportedError(
                "table.exec.state.ttl with an OVER aggregation is not yet supported by flott"
            )
        fn = RowTimeOverFunction(self.width, self.frame, self.specs)
        ds = self.input.translate(ctx).key_by(runtime.TupleKeySelector(tuple(self.partition)))
        return ctx.uid(ds.process(fn).name("OverAggregate"), "over-aggregate")


class RowTimeOverFunction(KeyedProcessFunction):
    def __init__(self, width: int, frame: OverFrame, specs: list[runtime.AggSpec]) -> None:
        self.width, self.frame, self.specs = width, frame, specs
        self._pending: Any = None
        self._accs: Any = None
        self._retained: Any = None

    def open(self, runtime_context: Any) -> None:
        self._pending = runtime_context.get_state(ValueStateDescriptor("over-pending", None))
        self._accs = runtime_context.get_state(ValueStateDescriptor("over-accumulators", None))
        self._retained = runtime_context.get_state(ValueStateDescriptor("over-retained", None))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        ts = ctx.timestamp()
        if ts is None:
            raise NotYetSupportedError("an OVER aggregation needs rows with event timestamps")
        if ts <= ctx.timer_service().current_watermark():
            return None  # late
        pending: dict[int, list[Any]] = self._pending.value() or {}
        if ts not in pending:
            pending[ts] = []
            ctx.timer_service().register_event_time_timer(ts)
        pending[ts].append(value[1])
        self._pending.update(pending)
        return None

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any] | None:
        pending: dict[int, list[Any]] = self._pending.value() or {}
        rows = pending.pop(timestamp, [])
        self._pending.update(pending)
        out: list[Any] = []
        if self.frame.preceding is None:
            accs = self._accs.value() or [s.create() for s in self.specs]
            if self.frame.kind == "ROWS":
                for row in rows:
                    self._accumulate(accs, row)
                    out.append((0, self._row(row, accs)))
            else:
                for row in rows:
                    self._accumulate(accs, row)
                out.extend((0, self._row(row, accs)) for row in rows)
            self._accs.update(accs)
            return out
        retained: list[tuple[int, Any]] = self._retained.value() or []
        if self.frame.kind == "ROWS":  # each row with the n rows before it (in time, then arrival)
            for row in rows:
                retained = [*retained, (timestamp, row)][-(self.frame.preceding + 1) :]
                accs = [s.create() for s in self.specs]
                for _, r in retained:
                    self._accumulate(accs, r)
                out.append((0, self._row(row, accs)))
            self._retained.update(retained)
            return out
        retained = [(t, r) for t, r in retained if t >= timestamp - self.frame.preceding]
        retained.extend((timestamp, r) for r in rows)
        self._retained.update(retained)
        accs = [s.create() for s in self.specs]
        for _, r in retained:
            self._accumulate(accs, r)
        return [(0, self._row(row, accs)) for row in rows]

    def _accumulate(self, accs: list[Any], row: Any) -> None:
        for s, a in zip(self.specs, accs, strict=True):
            a.accumulate(s.read(row))

    def _row(self, row: Any, accs: list[Any]) -> tuple[Any, ...]:
        return tuple(row[: self.width]) + tuple(a.value() for a in accs)
