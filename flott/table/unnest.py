"""UNNEST: ``FROM t CROSS JOIN UNNEST(t.arr) AS u(x)`` (a correlate: each row once per element, none
for an empty or NULL array, as Flink's inner correlate) and ``FROM UNNEST(ARRAY[...]) AS u(x)``
(the literal's elements as values)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from flott.datastream.functions import FlatMapFunction
from flott.table.plan import PlanNode, TranslationContext
from flott.table.types import DataType


class UnnestFunction(FlatMapFunction):
    def __init__(self, index: int) -> None:
        self.index = index

    def flat_map(self, value: Any) -> Iterator[Any]:
        kind, vals = value
        for element in vals[self.index] or ():
            yield kind, (*vals, element)


class Correlate(PlanNode):
    """The input's columns, then the unnested array column's element."""

    def __init__(self, input: PlanNode, index: int, name: str, element_type: DataType) -> None:
        self.input, self.index = input, index
        self.names = [*input.names, name]
        self.types = [*input.types, element_type]
        self.rowtime = input.rowtime

    def is_updating(self, streaming: bool) -> bool:
        return self.input.is_updating(streaming)

    def _translate(self, ctx: TranslationContext) -> Any:
        upstream = self.input.translate(ctx)
        out = upstream.flat_map(UnnestFunction(self.index)).name("Correlate")
        return ctx.uid(out.set_parallelism(upstream.transformation.parallelism), "correlate")
