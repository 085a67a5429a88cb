"""PyFlink's over windows: ``Table.over_window(Over.partition_by(..).order_by(..).preceding(..).alias("w"))``
then ``.select(..., col("x").sum.over(col("w")), ...)``.

The window is planned as SQL's ``agg(x) OVER (PARTITION BY .. ORDER BY rowtime <frame>)``
(flott.table.over_aggregate): ``preceding`` is ``UNBOUNDED_RANGE`` (the default), ``UNBOUNDED_ROW``,
a time interval (``lit(1).seconds``: a RANGE frame) or ``row_interval(n)`` (a ROWS frame);
``following`` is the current row (``CURRENT_RANGE`` for a RANGE frame, ``CURRENT_ROW`` for ROWS, the
default either way). As in Flink: one window per ``over_window`` call ("Currently, only a single
over window is supported."), an over call naming another alias is "Could not resolve over call.",
an unaliased over call is named ``_c<i>``, and over calls may sit inside expressions
(``col("x").count.over(col("w")) + 1``). A partition key may be an expression (a column appended
to the input). What flott's over aggregate cannot run (batch mode, processing time, following
rows, aggregates other than count/sum/min/max/avg) is refused when ``select`` is called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flott.errors import NotYetSupportedError, TableError
from flott.table.expression import Expression
from flott.table.planner import Resolver, Rex, validation_error

if TYPE_CHECKING:
    from flott.table.over_aggregate import OverFrame
    from flott.table.table import Table

__all__ = [
    "Over",
    "OverWindow",
    "OverWindowPartitioned",
    "OverWindowPartitionedOrdered",
    "OverWindowPartitionedOrderedPreceding",
    "OverWindowedTable",
]

UNBOUNDED_RANGE = "UNBOUNDED_RANGE"
_OVER_AGGREGATES = ("count", "sum", "min", "max", "avg")


def _alias_name(alias: Any) -> str:
    if not isinstance(alias, str):
        raise TypeError(f"an over window's alias is a str, got {alias!r}")
    return alias


class OverWindow:
    """A fully defined over window: what ``Table.over_window`` takes."""

    def __init__(
        self, partition_by: list[Any], order_by: Any, preceding: Any, following: Any, alias: str
    ) -> None:
        self.partition_by, self.order_by = partition_by, order_by
        self.preceding, self.following, self.alias_name = preceding, following, alias


class OverWindowPartitionedOrderedPreceding:
    def __init__(self, partition_by: list[Any], order_by: Any, preceding: Any, following: Any = None):
        self._partition_by, self._order_by = partition_by, order_by
        self._preceding, self._following = preceding, following

    def following(self, following: Expression) -> OverWindowPartitionedOrderedPreceding:
        return OverWindowPartitionedOrderedPreceding(
            self._partition_by, self._order_by, self._preceding, following
        )

    def alias(self, alias: str) -> OverWindow:
        return OverWindow(
            self._partition_by, self._order_by, self._preceding, self._following, _alias_name(alias)
        )


class OverWindowPartitionedOrdered:
    def __init__(self, partition_by: list[Any], order_by: Any) -> None:
        self._partition_by, self._order_by = partition_by, order_by

    def preceding(self, preceding: Expression) -> OverWindowPartitionedOrderedPreceding:
        return OverWindowPartitionedOrderedPreceding(self._partition_by, self._order_by, preceding)

    def alias(self, alias: str) -> OverWindow:
        """Without ``preceding``: UNBOUNDED_RANGE, as in Flink."""
        bound = Expression("over_bound", UNBOUNDED_RANGE)
        return OverWindow(self._partition_by, self._order_by, bound, None, _alias_name(alias))


class OverWindowPartitioned:
    def __init__(self, partition_by: list[Any]) -> None:
        self._partition_by = partition_by

    def order_by(self, order_by: Expression) -> OverWindowPartitionedOrdered:
        return OverWindowPartitionedOrdered(self._partition_by, order_by)


class Over:
    """Builds an over window: ``Over.partition_by(col("a")).order_by(col("rowtime")).alias("w")``."""

    @classmethod
    def order_by(cls, order_by: Expression) -> OverWindowPartitionedOrdered:
        return OverWindowPartitionedOrdered([], order_by)

    @classmethod
    def partition_by(cls, *partition_by: Expression) -> OverWindowPartitioned:
        return OverWindowPartitioned(list(partition_by))


def over_windowed(table: Table, over_windows: tuple[Any, ...]) -> OverWindowedTable:
    if len(over_windows) != 1:
        raise TableError("Currently, only a single over window is supported.")
    window = over_windows[0]
    if not isinstance(window, OverWindow):
        raise TypeError(f"Table.over_window takes an over window built by Over, got {window!r}")
    return OverWindowedTable(table, window)


def _frame(window: OverWindow) -> OverFrame:
    """The window's bounds as a ROWS or RANGE frame ending at the current row."""
    from flott.table.over_aggregate import OverFrame

    p = window.preceding
    unbounded = ("UNBOUNDED_RANGE", "UNBOUNDED_ROW")
    if isinstance(p, Expression) and p.kind == "over_bound" and p.value in unbounded:
        kind, preceding = ("RANGE" if p.value == "UNBOUNDED_RANGE" else "ROWS"), None
    elif isinstance(p, Expression) and p.kind == "interval" and p.args and p.args[0].kind == "lit":
        kind, preceding = "RANGE", int(p.args[0].value) * int(p.value)
    elif isinstance(p, Expression) and p.kind == "row_interval" and isinstance(p.value, int):
        kind, preceding = "ROWS", p.value
    else:
        raise validation_error("An over window expects literal or unbounded bounds for preceding.")
    f = window.following
    if f is not None:
        if not (isinstance(f, Expression) and f.kind == "over_bound"):
            raise NotYetSupportedError(
                f"over windows following anything but the current row ({f}) are not yet supported by flott"
            )
        if f.value in unbounded:
            raise validation_error("Following must not be unbounded.")
        if (f.value == "CURRENT_ROW") != (kind == "ROWS"):
            raise validation_error("Preceding and following must be of same interval type.")
    return OverFrame(kind, preceding)


class OverWindowedTable:
    """A table with an over window (``Table.over_window``): its ``select`` computes the over calls."""

    def __init__(self, table: Table, window: OverWindow) -> None:
        self._table, self._window = table, window

    def _replace_over_calls(self, e: Expression, found: list[Expression]) -> Expression:
        """The expression with each ``agg.over(col(alias))`` replaced by a reference to the
        ``$over<k>`` column its aggregate becomes; the aggregates go to ``found``."""
        if e.kind == "call" and e.value == "over" and len(e.args) == 2:
            agg, alias = e.args
            if not (alias.kind == "col" and alias.value == self._window.alias_name):
                raise validation_error("Could not resolve over call.")
            found.append(agg)
            return Expression("col", f"$over{len(found) - 1}")
        if not e.args:
            return e
        args = [self._replace_over_calls(a, found) if isinstance(a, Expression) else a for a in e.args]
        return Expression(e.kind, e.value, args, e.data_type, e.names)

    def select(self, *fields: Expression) -> Table:
        from flott.table.over_aggregate import OverAggregate
        from flott.table.plan import Calc, aggregate_plan
        from flott.table.table import Table, _name_of

        t, w = self._table, self._window
        node = t._node
        exprs = t._expand(fields)
        names = [_name_of(e, i) for i, e in enumerate(exprs)]
        over_aggs: list[Expression] = []
        rewritten = [self._replace_over_calls(e, over_aggs) for e in exprs]
        if not over_aggs:  # no over call: a plain projection (aggregates have no window to use)
            plain_rexes = [t._resolver().resolve(e) for e in exprs]
            return Table(Calc(node, plain_rexes, names), t._t_env)
        if not t._t_env._streaming:
            raise NotYetSupportedError("over windows in batch mode are not yet supported by flott")
        frame = _frame(w)
        if node.is_updating(True):  # as Flink's planner: an over aggregate reads insert-only rows
            raise TableError(
                "OverAggregate doesn't support consuming update and delete changes: the over "
                "window's input is an updating table"
            )
        plain = t._resolver()
        order = plain.resolve(w.order_by) if isinstance(w.order_by, Expression) else None
        if order is None or order.kind != "input" or order.index != node.rowtime:
            raise NotYetSupportedError(
                f"over windows ordered by anything but an event-time attribute ({w.order_by}) are not "
                "yet supported by flott"
            )
        partition_rexes = [plain.resolve(p) for p in w.partition_by]
        keys: list[int] = []
        computed: list[Rex] = []  # PARTITION BY an expression: a column appended to the input
        for p in partition_rexes:
            if p.kind == "input":
                keys.append(int(p.index))
            else:
                keys.append(len(node.names) + len(computed))
                computed.append(p)
        aggregates = t._resolver(aggregates=True)
        aggs: list[Rex] = []
        for a in over_aggs:
            agg = aggregates.resolve(a)
            if agg.kind != "agg" or agg.value not in _OVER_AGGREGATES:
                raise NotYetSupportedError(f"'{a}' over a window: only count/sum/min/max/avg are supported")
            aggs.append(agg)
        if computed:
            identity = [Rex("input", typ, index=k) for k, typ in enumerate(node.types)]
            hidden = [f"$partition{k}" for k in range(len(computed))]
            node = Calc(node, identity + computed, [*node.names, *hidden])
        width = len(node.names)
        ids = [Rex("input", typ, index=k) for k, typ in enumerate(node.types)]
        agg_names = [f"$over{k}" for k in range(len(aggs))]
        grouped = aggregate_plan(node, ids, aggs, list(node.names), agg_names)
        over = OverAggregate(
            grouped.input, width, keys, frame, grouped.specs, agg_names, [a.type for a in aggs]
        )
        resolver = Resolver([*node.names, *agg_names], over.types, t._t_env._functions, False)
        projections = [resolver.resolve(e) for e in rewritten]
        return Table(Calc(over, projections, names), t._t_env)
