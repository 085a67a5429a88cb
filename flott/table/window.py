"""PyFlink's group windows (``Tumble``, ``Slide``, ``Session``) and over windows (``Over``).

A group window on an event-time attribute (``Tumble.over(lit(5).seconds).on(col("ts")).alias("w")``)
is planned as the SQL window TVF of the same kind, aggregated per ``group_by`` keys and window:
``Table.window(w).group_by(col("w"), ...).select(..., col("w").start, col("w").end, aggregates)``
(flott.table.window_aggregate). ``w.rowtime`` is the window's time (end - 1 ms). Processing-time
windows and count windows (row intervals) are refused, naming what was asked for. Over windows are
flott.table.over_window's (``Over`` is re-exported here, where PyFlink has it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flott.errors import NotYetSupportedError
from flott.table.expression import Expression
from flott.table.over_window import Over, OverWindow
from flott.table.planner import validation_error

if TYPE_CHECKING:
    from flott.table.table import Table

__all__ = ["GroupWindow", "Over", "OverWindow", "Session", "Slide", "Tumble"]


def _refuse(what: str) -> NotYetSupportedError:
    return NotYetSupportedError(f"{what} windows are not yet supported by flott's Table API")


def _interval_ms(e: Any, what: str) -> int:
    if isinstance(e, Expression) and e.kind == "interval" and e.args and e.args[0].kind == "lit":
        return int(e.args[0].value) * int(e.value)
    if isinstance(e, Expression) and e.kind == "lit" and isinstance(e.value, int):
        raise NotYetSupportedError(f"{what}: row-count windows (lit(n).rows) are not yet supported by flott")
    raise validation_error(f"{what} must be a time interval such as lit(5).seconds, got {e}")


class GroupWindow:
    """A group window with its time attribute and alias (what ``Table.window`` takes)."""

    def __init__(self, kind: str, intervals_ms: list[int], time_field: Any = None, alias: str | None = None):
        self.kind, self.intervals_ms, self.time_field, self.alias_name = kind, intervals_ms, time_field, alias

    def on(self, time_field: Expression) -> GroupWindow:
        return GroupWindow(self.kind, self.intervals_ms, time_field, self.alias_name)

    def alias(self, alias: Any) -> GroupWindow:
        name = alias.value if isinstance(alias, Expression) else str(alias)
        return GroupWindow(self.kind, self.intervals_ms, self.time_field, name)


class _SlideWithSize:
    def __init__(self, size_ms: int) -> None:
        self.size_ms = size_ms

    def every(self, slide: Expression) -> GroupWindow:
        return GroupWindow("HOP", [_interval_ms(slide, "Slide.every"), self.size_ms])


class Tumble:
    @classmethod
    def over(cls, size: Any) -> GroupWindow:
        return GroupWindow("TUMBLE", [_interval_ms(size, "Tumble.over")])


class Slide:
    @classmethod
    def over(cls, size: Any) -> _SlideWithSize:
        return _SlideWithSize(_interval_ms(size, "Slide.over"))


class Session:
    @classmethod
    def with_gap(cls, gap: Any) -> GroupWindow:
        return GroupWindow("SESSION", [_interval_ms(gap, "Session.with_gap")])


_PROPERTIES = {"start": "window_start", "end": "window_end", "rowtime": "window_time"}


class GroupWindowedTable:
    def __init__(self, table: Table, window: GroupWindow) -> None:
        if not isinstance(window, GroupWindow):
            raise validation_error(f"Table.window needs a Tumble, Slide or Session window, got {window!r}")
        if window.time_field is None or window.alias_name is None:
            raise validation_error(
                "A group window needs a time attribute (.on(...)) and an alias (.alias(...))."
            )
        self._table, self._window = table, window

    def group_by(self, *fields: Expression) -> WindowGroupedTable:
        alias = self._window.alias_name
        refs = [f for f in fields if isinstance(f, Expression) and f.kind == "col" and f.value == alias]
        if len(refs) != 1:
            raise validation_error(
                "A group window expects an alias and this alias must be used in the GroupBy clause: "
                f"'{alias}'."
            )
        keys = [f for f in fields if not any(f is r for r in refs)]  # == builds an expression
        return WindowGroupedTable(self._table, self._window, keys)

    def select(self, *fields: Expression) -> Any:
        raise validation_error("A group window must be grouped: use window(...).group_by(col(alias), ...)")


class WindowGroupedTable:
    def __init__(self, table: Table, window: GroupWindow, keys: list[Expression]) -> None:
        self._table, self._window, self._keys = table, window, keys

    def _property(self, e: Expression) -> Expression:
        """``w.start``/``w.end``/``w.rowtime`` as the window TVF's columns; the alias alone is refused."""
        alias = self._window.alias_name
        if e.kind == "call" and e.value in _PROPERTIES and len(e.args) == 1:
            a = e.args[0]
            if a.kind == "col" and a.value == alias:
                return Expression("col", _PROPERTIES[e.value])
        if e.kind == "call" and e.value == "proctime" and e.args and e.args[0].value == alias:
            raise NotYetSupportedError("w.proctime (processing-time windows) is not yet supported by flott")
        if e.kind == "col" and e.value == alias:
            raise validation_error(f"Window alias '{alias}' can only be used with .start, .end or .rowtime")
        if not e.args:
            return e
        args = [self._property(x) if isinstance(x, Expression) else x for x in e.args]
        return Expression(e.kind, e.value, args, e.data_type, e.names)

    def select(self, *fields: Expression) -> Table:
        from flott.table.plan import (
            Calc,
            PlanNode,
            aggregate_plan,
            collect_aggregates,
            rewrite_over_aggregate,
        )
        from flott.table.planner import Resolver, Rex
        from flott.table.table import Table
        from flott.table.window_aggregate import WindowAggregate, WindowSpec, WindowTableFunction

        t, w = self._table, self._window
        node = t._node
        tf = w.time_field
        if not (isinstance(tf, Expression) and tf.kind == "col" and tf.value in node.names):
            raise validation_error(
                f"Cannot resolve field [{tf}], input field list:[{', '.join(node.names)}]."
            )
        key_rexes_plain = [t._resolver().resolve(k) for k in self._keys]
        partition = [r.index for r in key_rexes_plain if r.kind == "input"] if w.kind == "SESSION" else []
        if w.kind == "SESSION" and len(partition) != len(key_rexes_plain):
            raise NotYetSupportedError(
                "Session windows grouped by expressions are not yet supported by flott"
            )
        spec = WindowSpec(w.kind, w.intervals_ms, partition)
        tvf = WindowTableFunction(node, node.names.index(tf.value), spec)
        width = len(node.names)
        window_keys = [Rex("input", tvf.types[width + i], index=width + i) for i in (0, 1, 2)]
        key_rexes = window_keys + key_rexes_plain  # window_time too: w.rowtime is a window property
        exprs = [self._property(e) for e in t._expand(fields)]
        resolver = Resolver(tvf.names, tvf.types, t._t_env._functions, True)
        rexes = [resolver.resolve(e) for e in exprs]
        names: list[str] = []
        computed = 0  # Flink names an unaliased expression EXPR$<its index among the non-columns>
        for given in t._expand(fields):
            if given.kind == "col":
                names.append(str(given.value))
                continue
            names.append(given.names[0] if given.kind == "alias" else f"EXPR${computed}")
            computed += 1
        aggs: list[Rex] = []
        for r in rexes:
            collect_aggregates(r, aggs)

        def not_grouped(rex: Rex) -> Exception:
            return validation_error(f"Cannot resolve field [{tvf.names[rex.index]}], it is not grouped.")

        types = [r.type for r in key_rexes] + [a.type for a in aggs]
        key_names = [f"$g{i}" for i in range(len(key_rexes))]
        agg_names = [f"$f{i}" for i in range(len(aggs))]
        agg_node: PlanNode
        if t._t_env._streaming:
            agg_node = WindowAggregate(tvf, key_rexes, aggs, key_names + agg_names, types)
        else:  # bounded input: the rows with their windows, grouped by them
            agg_node = aggregate_plan(tvf, key_rexes, aggs, key_names, agg_names)
        projections = [rewrite_over_aggregate(r, key_rexes, aggs, not_grouped) for r in rexes]
        for i, p in enumerate(projections):  # the Table API types window properties nullable
            if p.kind == "input" and p.index < len(key_rexes) and key_rexes[p.index].index >= width:
                projections[i] = Rex("input", p.type.with_nullability(True), index=p.index)
        return Table(Calc(agg_node, projections, names), t._t_env)
