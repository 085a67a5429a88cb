"""``flat_aggregate`` with a Python ``TableAggregateFunction`` (``@udtaf``): per group key one
accumulator, and the rows ``emit_value`` yields from it.

Streaming mode only (Flink's batch planner cannot plan a table aggregate either). Every change to
a key's accumulator first withdraws what the key emitted last (``-D`` rows, the old accumulator's
``emit_value`` again) and then emits the new rows (``+I``), as PyFlink's GroupTableAggFunction does
with one row per bundle. The output columns are the group keys, then the function's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from flott.common.types import Row
from flott.datastream.functions import KeyedProcessFunction
from flott.datastream.state import ValueStateDescriptor
from flott.errors import NotYetSupportedError
from flott.table import runtime
from flott.table.expression import Expression
from flott.table.plan import Calc, PlanNode, TranslationContext
from flott.table.planner import Resolver, Rex, table_error, validation_error
from flott.table.types import DataType, RowType
from flott.table.udf import FunctionContext, UserDefinedFunctionWrapper, require_retract

if TYPE_CHECKING:
    from flott.table.table import Table


def _row_values(x: Any) -> tuple[Any, ...]:
    if isinstance(x, Row):
        return tuple(x._values)
    if isinstance(x, tuple):
        return x
    return (x,)


class GroupTableAggFunction(KeyedProcessFunction):
    def __init__(self, key_count: int, fn: Any, args: tuple[int, ...], width: int) -> None:
        self.key_count, self.fn, self.args, self.width = key_count, fn, args, width
        self._state: Any = None

    def open(self, runtime_context: Any) -> None:
        self._state = runtime_context.get_state(ValueStateDescriptor("group-table-agg", None))
        self.fn.open(FunctionContext(runtime_context))

    def close(self) -> None:
        self.fn.close()

    def _emit(self, key: tuple[Any, ...], acc: Any, kind: int) -> list[Any]:
        out = []
        for x in self.fn.emit_value(acc) or ():
            values = _row_values(x)
            if len(values) < self.width:
                raise ValueError(
                    f"{type(self.fn).__name__}.emit_value gave a row of {len(values)} field(s) {values!r} "
                    f"where its result_type declares {self.width}"
                )
            out.append((kind, key + tuple(values[: self.width])))
        return out

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        kind, vals = value
        key = tuple(vals[: self.key_count])
        st = self._state.value()
        out: list[Any] = []
        if st is None:
            if kind in (1, 3):
                return None
            st = [0, self.fn.create_accumulator()]
        else:
            out.extend(self._emit(key, st[1], 3))
        args = [vals[i] for i in self.args]
        if kind in (0, 2):
            self.fn.accumulate(st[1], *args)
            st[0] += 1
        else:
            self.fn.retract(st[1], *args)
            st[0] -= 1
        if st[0] <= 0:
            self._state.clear()
            return out
        self._state.update(st)
        out.extend(self._emit(key, st[1], 0))
        return out


class TableAggregate(PlanNode):
    def __init__(
        self,
        input: PlanNode,
        key_count: int,
        fn: UserDefinedFunctionWrapper,
        names: list[str],
        types: list[DataType],
    ) -> None:
        self.input, self.key_count, self.fn, self.names, self.types = input, key_count, fn, names, types

    def is_updating(self, streaming: bool) -> bool:
        return streaming

    def _translate(self, ctx: TranslationContext) -> Any:
        if not ctx.streaming:  # Flink's batch planner has no rule for a table aggregate
            raise table_error(
                "Cannot generate a valid execution plan for the "
                "given query: flat_aggregate (a table aggregate function) runs in streaming mode only"
            )
        fn = self.fn.evaluator()
        if self.input.is_updating(ctx.streaming):
            require_retract(fn)
        keys = tuple(range(self.key_count))
        args = tuple(range(self.key_count, len(self.input.names)))
        width = len(self.types) - self.key_count
        process = GroupTableAggFunction(self.key_count, fn, args, width)
        ds = self.input.translate(ctx).key_by(runtime.TupleKeySelector(keys))
        return ctx.uid(ds.process(process).name("GroupTableAggregate"), "group-table-aggregate")


class FlatAggregateTable:
    """What ``flat_aggregate`` gives: only ``select`` follows, as in PyFlink."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def select(self, *fields: Any) -> Table:
        return self._table.select(*fields)


def flat_aggregate(table: Table, keys: list[Expression], func: Any) -> FlatAggregateTable:
    from flott.table.table import Table

    if isinstance(func, UserDefinedFunctionWrapper):
        raise NotYetSupportedError(
            "flat_aggregate of a table aggregate function taking the whole row is not yet supported by "
            "flott: call it on its columns, e.g. top2(col('v')).alias('a', 'b')"
        )
    if not isinstance(func, Expression):
        raise TypeError(f"flat_aggregate takes a table aggregate function call, got {type(func).__name__}")
    alias: list[str] | None = None
    if func.kind == "alias":
        alias, func = list(func.names), func.args[0]
    fn = func.value
    if isinstance(fn, str):
        fn = table._t_env._functions.get(fn.lower())
    if func.kind != "call" or not isinstance(fn, UserDefinedFunctionWrapper) or fn.kind != "table_aggregate":
        raise validation_error("Only a table aggregate function can be used in the flat_aggregate operator.")
    node = table._node
    resolver = Resolver(node.names, node.types, table._t_env._functions)
    key_rexes = [resolver.resolve(k) for k in keys]
    key_names = [k.names[0] if k.kind == "alias" else str(k) for k in keys]
    arg_rexes = [resolver.resolve(a) for a in func.args]
    result = fn.result_type
    fields = result.field_types() if isinstance(result, RowType) else [result]
    names = result.field_names() if isinstance(result, RowType) else ["f0"]
    if alias is not None:
        if len(alias) != len(fields):
            raise validation_error(
                f"List of column aliases must have same degree as table; the returned table of function "
                f"'{type(fn.fn).__name__}' has {len(fields)} columns, whereas alias list has {len(alias)} "
                "columns"
            )
        names = alias
    pre_names = [f"$k{i}" for i in range(len(key_rexes))] + [f"$a{i}" for i in range(len(arg_rexes))]
    pre = Calc(node, [*key_rexes, *arg_rexes], pre_names)
    agg = TableAggregate(pre, len(key_rexes), fn, key_names + names, [r.type for r in key_rexes] + fields)
    ids = [Rex("input", t, index=i) for i, t in enumerate(agg.types)]
    return FlatAggregateTable(Table(Calc(agg, ids, list(agg.names)), table._t_env))
