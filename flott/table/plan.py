"""The logical plan both the Table API and SQL build, and its translation to a DataStream program.

Nodes: ``Values`` (from_elements), ``Scan`` (a connector table), ``Calc`` (projection + filter),
``Aggregate`` (group aggregation), ``Union``. Each knows its output columns and whether it is
``updating`` (emits -U/+U/-D; in streaming mode a group aggregate is, and so is what follows it).
``translate`` turns a node into a DataStream of ``(kind, values)`` records on the job's
StreamExecutionEnvironment: a calc becomes one flat_map (projection and filter fused), an aggregate a
key_by + keyed process function holding its accumulators in keyed state, so Table/SQL jobs get
keyed state, checkpoints, savepoints and REST like any DataStream job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flott.errors import NotYetSupportedError, TableValidationError
from flott.table import runtime
from flott.table.planner import Rex, calc_source, table_error, validation_error
from flott.table.types import DataType


@dataclass
class TranslationContext:
    env: Any
    streaming: bool
    parallelism: int
    cache: dict[int, Any] = field(default_factory=dict)
    uids: int = 0
    state_ttl_ms: int = 0
    """``table.exec.state.ttl`` in streaming mode (0: state kept forever; batch mode keeps none)."""

    def uid(self, ds: Any, kind: str) -> Any:
        """Stable operator uids from the plan (the n-th operator of the translated plan), so a
        savepoint of a Table/SQL job maps back to the same program's operators."""
        self.uids += 1
        return ds.uid(f"table-{kind}-{self.uids}")


class PlanNode:
    names: list[str]
    types: list[DataType]
    updating: bool = False
    rowtime: int | None = None
    """The index of the column that is the event-time attribute (``WATERMARK FOR``), if any."""

    def translate(self, ctx: TranslationContext) -> Any:
        cached = ctx.cache.get(id(self))
        if cached is None:
            cached = ctx.cache[id(self)] = self._translate(ctx)
        return cached

    def _translate(self, ctx: TranslationContext) -> Any:
        raise NotImplementedError

    def is_updating(self, streaming: bool) -> bool:
        return False


class Values(PlanNode):
    def __init__(self, rows: list[tuple[Any, ...]], names: list[str], types: list[DataType]) -> None:
        self.rows, self.names, self.types = rows, names, types

    def _translate(self, ctx: TranslationContext) -> Any:
        return ctx.uid(ctx.env.from_collection([(0, r) for r in self.rows]).name("Values"), "values")


class Scan(PlanNode):
    """A connector table as a source; the connector builds the DataStream."""

    def __init__(self, table: Any) -> None:
        self.table = table
        self.names, self.types = list(table.names), list(table.types)

    def is_updating(self, streaming: bool) -> bool:
        """An upsert-kafka table reads as a changelog (+I/-U/+U/-D) in streaming mode."""
        return streaming and bool(getattr(self.table.connector, "updating_source", False))

    def _translate(self, ctx: TranslationContext) -> Any:
        return self.table.connector.source_stream(ctx, self.table)

    def translate_filtered(self, ctx: TranslationContext, condition: Rex) -> Any:
        """The scan under a filter: a connector that can prune (filesystem partitions) reads only
        what the condition can keep; the filter itself still runs on every row."""
        prune = getattr(self.table.connector, "pruned_source_stream", None)
        if prune is None:
            return self.translate(ctx)
        return prune(ctx, self.table, condition)


class Calc(PlanNode):
    def __init__(
        self, input: PlanNode, projections: list[Rex], names: list[str], condition: Rex | None = None
    ) -> None:
        self.input, self.projections, self.names, self.condition = input, projections, names, condition
        self.types = [p.type for p in projections]
        self.rowtime = next(
            (i for i, p in enumerate(projections) if p.kind == "input" and p.index == input.rowtime), None
        )
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise validation_error(f"Ambiguous column name: {dup}")

    def is_updating(self, streaming: bool) -> bool:
        return self.input.is_updating(streaming)

    def _translate(self, ctx: TranslationContext) -> Any:
        from flott.table.pandas_calc import has_pandas_call, split_pandas_calc  # deferred: it builds on Calc

        if any(has_pandas_call(p) for p in self.projections) or has_pandas_call(self.condition):
            return split_pandas_calc(self).translate(ctx)
        consts: list[Any] = []
        udfs: list[Any] = []
        source = calc_source(self.projections, self.condition, consts, udfs)
        fn = runtime.CalcFunction(runtime.CompiledCode(source, consts), udfs)
        if isinstance(self.input, Scan) and self.condition is not None:
            upstream = self.input.translate_filtered(ctx, self.condition)
        else:
            upstream = self.input.translate(ctx)
        # chained to its input at the input's parallelism, as Flink's Calc: a rebalance here would
        # reorder the rows of one key before the next keyed operator (and change its changelog)
        calc = upstream.flat_map(fn).name("Calc").set_parallelism(upstream.transformation.parallelism)
        return ctx.uid(calc, "calc")


class Aggregate(PlanNode):
    """Group aggregation over an input whose first ``key_count`` columns are the group keys and
    whose other columns the aggregates read (the planner puts a Calc under it for that)."""

    def __init__(
        self,
        input: PlanNode,
        key_count: int,
        specs: list[runtime.AggSpec],
        names: list[str],
        types: list[DataType],
    ) -> None:
        self.input, self.key_count, self.specs, self.names, self.types = input, key_count, specs, names, types

    def is_updating(self, streaming: bool) -> bool:
        return streaming

    def _translate(self, ctx: TranslationContext) -> Any:
        if self.input.is_updating(ctx.streaming):
            from flott.table.udf import require_retract

            for spec in self.specs:
                if spec.udaf is not None:
                    require_retract(spec.udaf)
        if ctx.streaming and any(getattr(s.udaf, "vectorized", False) for s in self.specs):
            raise table_error("Pandas UDAFs are not supported in streaming mode currently.")
        keys = tuple(range(self.key_count))
        fn = runtime.GroupAggFunction(keys, self.specs, not ctx.streaming, ctx.state_ttl_ms)
        ds = self.input.translate(ctx)
        return ctx.uid(
            ds.key_by(runtime.TupleKeySelector(keys)).process(fn).name("GroupAggregate"), "group-aggregate"
        )


class Union(PlanNode):
    def __init__(self, inputs: list[PlanNode]) -> None:
        first = inputs[0]
        for other in inputs[1:]:
            if len(other.types) != len(first.types):
                raise validation_error(
                    f"Union two tables of different column sizes: [{', '.join(first.names)}] and "
                    f"[{', '.join(other.names)}]"
                )
        from flott.table.planner import common_type

        self.inputs = inputs
        self.names = list(first.names)
        self.types = []
        for k in range(len(first.types)):
            column = [i.types[k] for i in inputs]
            try:
                self.types.append(common_type(column))  # SQL's UNION widens (INT and BIGINT give BIGINT)
            except TableValidationError:
                raise validation_error(
                    f"Union two tables of different schema: [{_columns(first)}] and [{_columns(inputs[1])}]"
                ) from None

    def is_updating(self, streaming: bool) -> bool:
        return any(i.is_updating(streaming) for i in self.inputs)

    def _translate(self, ctx: TranslationContext) -> Any:
        streams = [i.translate(ctx) for i in self.inputs]
        return streams[0].union(*streams[1:])


class Sort(PlanNode):
    """ORDER BY [LIMIT/OFFSET] of a bounded input (batch mode): one sorted run at the end."""

    def __init__(self, input: PlanNode, keys: list[tuple[int, bool]], offset: int, limit: int | None) -> None:
        self.input, self.keys, self.offset, self.limit = input, keys, offset, limit
        self.names, self.types = list(input.names), list(input.types)

    def _translate(self, ctx: TranslationContext) -> Any:
        if ctx.streaming:
            raise refuse("ORDER BY / LIMIT in streaming mode (Top-N, sort on time attributes)")
        ds = self.input.translate(ctx).key_by(runtime.ConstantKey())
        out = ds.process(runtime.SortFunction(self.keys, self.offset, self.limit)).name("Sort")
        return ctx.uid(out.set_parallelism(1), "sort")


def _columns(node: PlanNode) -> str:
    return ", ".join(f"{n}: {t}" for n, t in zip(node.names, node.types, strict=True))


def aggregate_plan(
    input: PlanNode, key_rexes: list[Rex], agg_rexes: list[Rex], key_names: list[str], agg_names: list[str]
) -> Aggregate:
    """A Calc computing the keys and the aggregates' arguments, then the Aggregate over it."""
    pre: list[Rex] = list(key_rexes)
    pre_names = [f"$k{i}" for i in range(len(key_rexes))]
    specs: list[runtime.AggSpec] = []

    def arg_index(r: Rex) -> int:
        for i, p in enumerate(pre[len(key_rexes) :], start=len(key_rexes)):
            if p.key() == r.key():
                return i
        pre.append(r)
        pre_names.append(f"$a{len(pre)}")
        return len(pre) - 1

    for a in agg_rexes:
        if not isinstance(a.value, str):  # a Python AggregateFunction
            specs.append(
                runtime.AggSpec(
                    "udaf",
                    None,
                    udaf=a.value.evaluator([o.type for o in a.operands]),
                    args=tuple(arg_index(o) for o in a.operands)
                )
            )
            continue
        arg = arg_index(a.operands[0]) if a.operands else None
        integral = bool(a.operands) and a.operands[0].type.type_root in (
            "TINYINT",
            "SMALLINT",
            "INTEGER",
            "BIGINT",
        )
        if a.value == "count" and a.operands and not a.operands[0].type.is_nullable and not a.distinct:
            arg = None  # COUNT(non-null column) counts rows
        specs.append(runtime.AggSpec(a.value, arg, distinct=a.distinct, integral=integral))
    calc = Calc(input, pre, pre_names)
    names = key_names + agg_names
    types = [r.type for r in key_rexes] + [a.type for a in agg_rexes]
    return Aggregate(calc, len(key_rexes), specs, names, types)


def rewrite_over_aggregate(rex: Rex, key_rexes: list[Rex], agg_rexes: list[Rex], not_grouped: Any) -> Rex:
    """The select expression over the Aggregate's output: group keys and aggregate calls become
    column references; a column of the input that is neither is not being grouped."""
    k = rex.key()
    for i, kr in enumerate(key_rexes):
        if kr.key() == k:
            return Rex("input", kr.type, index=i)
    if rex.kind == "agg":
        for i, ar in enumerate(agg_rexes):
            if ar is rex:
                return Rex("input", ar.type, index=len(key_rexes) + i)
        agg_rexes.append(rex)
        return Rex("input", rex.type, index=len(key_rexes) + len(agg_rexes) - 1)
    if rex.kind == "input":
        raise not_grouped(rex)
    if not rex.operands:
        return rex
    return Rex(
        rex.kind,
        rex.type,
        rex.index,
        rex.value,
        [rewrite_over_aggregate(o, key_rexes, agg_rexes, not_grouped) for o in rex.operands],
        rex.distinct,
    )


def collect_aggregates(rex: Rex, out: list[Rex]) -> None:
    if rex.kind == "agg":
        if any(o.kind == "agg" or _has_agg(o) for o in rex.operands):
            raise validation_error("Aggregate calls cannot be nested")
        if all(x is not rex for x in out):
            out.append(rex)
        return
    for o in rex.operands:
        collect_aggregates(o, out)


def _has_agg(rex: Rex) -> bool:
    return rex.kind == "agg" or any(_has_agg(o) for o in rex.operands)


def refuse(construct: str) -> NotYetSupportedError:
    return NotYetSupportedError(f"{construct} is not yet supported by flott's Table API/SQL")


def explain_plan(node: PlanNode) -> str:
    """Table.explain / explain_sql / EXPLAIN PLAN FOR: flott's plan tree, one operator a line with
    its output columns, under Flink's three section headings. flott plans once (no separate logical
    and physical optimisation), so the three sections show the same tree."""
    lines: list[str] = []

    def walk(n: PlanNode, depth: int) -> None:
        columns = ", ".join(f"{name}: {t}" for name, t in zip(n.names, n.types, strict=True))
        lines.append(f"{'   ' * depth}{'+- ' if depth else ''}{type(n).__name__}(fields=[{columns}])")
        for child in _children(n):
            walk(child, depth + 1)

    walk(node, 0)
    tree = "\n".join(lines)
    return "".join(
        f"== {title} ==\n{tree}\n\n"
        for title in ("Abstract Syntax Tree", "Optimized Physical Plan", "Optimized Execution Plan")
    )


def _children(node: PlanNode) -> list[PlanNode]:
    out: list[PlanNode] = []
    for value in vars(node).values():
        if isinstance(value, PlanNode):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, PlanNode))
    return out
