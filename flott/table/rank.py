"""Top-N and deduplication: ``ROW_NUMBER() OVER (PARTITION BY .. ORDER BY ..)`` filtered on the row number.

In batch mode ``RANK()`` and ``DENSE_RANK()`` may take ROW_NUMBER's place (rows that tie on the
sort key share a rank; RANK leaves gaps after ties, DENSE_RANK does not); in streaming mode Flink
refuses them, and so does flott (at plan time, in sql.py).

Flink's planner turns an over aggregation of ROW_NUMBER whose result is filtered by ``rn <= N``
(``rn < N``, ``rn = N``, ``rn BETWEEN a AND b``) into a Rank node, and into a Deduplicate when the
range is ``rn = 1``, the order is the event-time attribute and the row number is not selected.
In batch mode a partition's rows are sorted when the input ends. In streaming mode the functions
follow Flink's AppendOnlyTopNFunction and RowTimeDeduplicateFunction, so the changelog is the one
PyFlink prints: with the row number selected, a row entering the top N shifts the rows below it
(``-U``/``+U`` per changed rank, ``+I`` when the top N was not full); without it, ``+I`` for the
new row and ``-D`` for the one it pushed out.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from flott.datastream.functions import KeyedProcessFunction
from flott.datastream.state import ValueStateDescriptor
from flott.errors import NotYetSupportedError
from flott.table import runtime
from flott.table.plan import PlanNode, TranslationContext
from flott.table.types import DataType, DataTypes


def _compare(keys: list[tuple[int, bool]]) -> Any:
    """Flink's default null order: NULLs first ascending, last descending."""

    def cmp(a: tuple[Any, ...], b: tuple[Any, ...]) -> int:
        for (_, ascending), x, y in zip(keys, a, b, strict=True):
            if x == y:
                continue
            if x is None:
                r = -1
            elif y is None:
                r = 1
            else:
                r = -1 if x < y else 1
            return r if ascending else -r
        return 0

    return cmp


class Rank(PlanNode):
    """The input's columns, then the row number (``None`` when it is not selected)."""

    def __init__(
        self,
        input: PlanNode,
        partition: list[int],
        order: list[tuple[int, bool]],
        start: int,
        end: int,
        output_number: bool,
        name: str,
        rank_type: str = "ROW_NUMBER",
    ) -> None:
        self.input, self.partition, self.order, self.rank_type = input, partition, order, rank_type
        self.start, self.end, self.output_number = start, end, output_number
        self.names = [*list(input.names), name]
        self.types: list[DataType] = [*list(input.types), DataTypes.BIGINT().not_null()]
        self.rowtime = input.rowtime
        self.deduplicate = (
            start == end == 1
            and not output_number
            and len(order) == 1
            and input.rowtime is not None
            and order[0][0] == input.rowtime
            and rank_type == "ROW_NUMBER"
        )

    def is_updating(self, streaming: bool) -> bool:
        return streaming

    def _translate(self, ctx: TranslationContext) -> Any:
        if ctx.streaming and self.input.is_updating(True):
            raise NotYetSupportedError(
                "Top-N (ROW_NUMBER() OVER ...) over an updating input is not yet supported by flott"
            )
        fn: KeyedProcessFunction
        if ctx.streaming and ctx.state_ttl_ms > 0 and not self.deduplicate:
            raise NotYetSupportedError(
                "table.exec.state.ttl with a streaming Top-N (ROW_NUMBER() OVER ... WHERE rn <= N) is not "
                "yet supported by flott (deduplication, group aggregations and regular joins honour it)"
            )
        if not ctx.streaming:
            fn = BatchRankFunction(self.order, self.start, self.end, self.output_number, self.rank_type)
        elif self.deduplicate:
            fn = RowTimeDeduplicateFunction(
                self.order[0][0], keep_last=not self.order[0][1], state_ttl_ms=ctx.state_ttl_ms
            )
        else:
            fn = AppendOnlyTopNFunction(self.order, self.start, self.end, self.output_number)
        ds = self.input.translate(ctx).key_by(runtime.TupleKeySelector(tuple(self.partition)))
        name = "Deduplicate" if ctx.streaming and self.deduplicate else "Rank"
        return ctx.uid(ds.process(fn).name(name), name.lower())


class BatchRankFunction(runtime.RowsAtEndOfInput):
    STATE = "rank-rows"

    def __init__(
        self,
        order: list[tuple[int, bool]],
        start: int,
        end: int,
        output_number: bool,
        rank_type: str = "ROW_NUMBER",
    ) -> None:
        super().__init__()
        self.order, self.start, self.end, self.output_number = order, start, end, output_number
        self.rank_type = rank_type

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any] | None:
        rows: list[tuple[Any, ...]] = self._rows.value() or []
        self._rows.clear()
        cmp = _compare(self.order)
        def by_order(a: tuple[Any, ...], b: tuple[Any, ...]) -> int:
            return int(cmp(self._key(a), self._key(b)))

        rows.sort(key=functools.cmp_to_key(by_order))
        out = []
        rank, previous = 0, None
        for n, r in enumerate(rows, start=1):
            key = self._key(r)
            if self.rank_type == "ROW_NUMBER" or previous is None or cmp(key, previous) != 0:
                rank = n if self.rank_type != "DENSE_RANK" else rank + 1
            previous = key
            if rank > self.end:
                break
            if self.start <= rank:
                out.append((0, (*r, rank if self.output_number else None)))
        return out

    def _key(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(row[i] for i, _ in self.order)


class AppendOnlyTopNFunction(KeyedProcessFunction):
    """The top ``end`` rows of a partition in keyed state as ``[sort key, rows]`` entries, best first."""

    def __init__(self, order: list[tuple[int, bool]], start: int, end: int, output_number: bool) -> None:
        self.order, self.start, self.end, self.output_number = order, start, end, output_number
        self._buffer: Any = None

    def open(self, runtime_context: Any) -> None:
        self._buffer = runtime_context.get_state(ValueStateDescriptor("top-n-buffer", None))

    def _row(self, row: tuple[Any, ...], rank: int) -> tuple[Any, ...]:
        return (*row, rank if self.output_number else None)

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        row = value[1]
        key = tuple(row[i] for i, _ in self.order)
        cmp = _compare(self.order)
        buffer: list[list[Any]] = self._buffer.value() or []
        count = sum(len(e[1]) for e in buffer)
        if buffer and cmp(key, buffer[-1][0]) >= 0 and count >= self.end:
            return None  # not in the top N
        at = 0
        while at < len(buffer) and cmp(buffer[at][0], key) < 0:
            at += 1
        if at < len(buffer) and cmp(buffer[at][0], key) == 0:
            buffer[at][1].append(row)
        else:
            buffer.insert(at, [key, [row]])
        out: list[Any] = []
        if self.output_number or self.start > 1:
            self._with_number(buffer, at, row, out)
        else:
            self._without_number(buffer, row, out)
        # keep only the top N
        kept, total = [], 0
        for k, rows in buffer:
            if total >= self.end:
                break
            rows = rows[: self.end - total]
            total += len(rows)
            kept.append([k, rows])
        self._buffer.update(kept)
        return out

    def _with_number(self, buffer: list[list[Any]], at: int, row: tuple[Any, ...], out: list[Any]) -> None:
        rank = sum(len(e[1]) for e in buffer[: at + 1])
        current = row
        for _, rows in buffer[at + 1 :]:
            for previous in rows:
                if rank > self.end:
                    break
                if self.start <= rank:
                    out.append((1, self._row(previous, rank)))
                    out.append((2, self._row(current, rank)))
                current = previous
                rank += 1
        if rank <= self.end and self.start <= rank:
            out.append((0, self._row(current, rank)))

    def _without_number(self, buffer: list[list[Any]], row: tuple[Any, ...], out: list[Any]) -> None:
        if sum(len(e[1]) for e in buffer) > self.end:
            last = buffer[-1][1][-1]
            buffer[-1][1].pop()
            if not buffer[-1][1]:
                buffer.pop()
            if last == row:
                return
            out.append((3, self._row(last, 0)))
        out.append((0, self._row(row, 0)))


class RowTimeDeduplicateFunction(KeyedProcessFunction):
    """Flink's RowTimeDeduplicateFunction: the first (or last) row per key by event time; a row
    that replaces the kept one retracts it (``-U`` old, ``+U`` new). With a state TTL, a key whose
    row was written longer ago than it keeps the next row as if it were the first."""

    def __init__(self, rowtime: int, keep_last: bool, state_ttl_ms: int = 0) -> None:
        self.rowtime, self.keep_last, self.state_ttl_ms = rowtime, keep_last, state_ttl_ms
        self._kept: Any = None

    def open(self, runtime_context: Any) -> None:
        descriptor = runtime.with_state_ttl(ValueStateDescriptor("deduplicate-row", None), self.state_ttl_ms)
        self._kept = runtime_context.get_state(descriptor)

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        row = value[1]
        previous = self._kept.value()
        if previous is not None:
            old, new = previous[self.rowtime], row[self.rowtime]
            replaces = new >= old if self.keep_last else new < old
            if not replaces:
                return None
        self._kept.update(row)
        if previous is None:
            return [(0, (*row, None))]
        return [(1, (*previous, None)), (2, (*row, None))]
