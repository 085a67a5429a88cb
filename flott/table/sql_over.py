"""SQL's OVER clause in flott's SQL planner: Top-N and deduplication (ROW_NUMBER, and RANK /
DENSE_RANK in batch mode, filtered on the rank by the outer query) and OVER aggregations.

A mixin of :class:`flott.table.sql.SqlPlanner`: its methods need the planner's expression
translation (``_rex``) and error positions (``_invalid``), and are kept here so that the planner's
module stays about one part of SQL.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from flott.errors import NotYetSupportedError
from flott.table.plan import PlanNode
from flott.table.planner import Rex, table_error
from flott.table.sql_scope import Scope

if TYPE_CHECKING:
    from flott.table.table_environment import TableEnvironment

__all__ = ["RANK_FUNCTIONS", "RANK_TYPES", "OverPlanning"]

# The ranking functions of a Top-N (Flink's RankType), by their sqlglot node.
RANK_TYPES: dict[type, str] = {exp.RowNumber: "ROW_NUMBER", exp.Rank: "RANK", exp.DenseRank: "DENSE_RANK"}
RANK_FUNCTIONS = tuple(RANK_TYPES)


def _rank_bound(c: Any, alias: str) -> tuple[int, int] | None:
    """The row-number range of ``rn <= N`` / ``rn < N`` / ``rn = N`` / ``rn BETWEEN a AND b``."""

    def is_rn(x: Any) -> bool:
        return isinstance(x, exp.Column) and x.name == alias

    def number(x: Any) -> int | None:
        return int(x.this) if isinstance(x, exp.Literal) and not x.is_string and x.this.isdigit() else None

    if isinstance(c, exp.Between) and is_rn(c.this):
        lo, hi = number(c.args.get("low")), number(c.args.get("high"))
        return (lo, hi) if lo is not None and hi is not None else None
    flipped = {exp.GTE: exp.LTE, exp.GT: exp.LT, exp.LTE: exp.GTE, exp.LT: exp.GT, exp.EQ: exp.EQ}
    kind, left, right = type(c), c.args.get("this"), c.args.get("expression")
    if kind in flipped and not is_rn(left) and is_rn(right):
        kind, left, right = flipped[kind], right, left
    if not is_rn(left) or number(right) is None:
        return None
    n = number(right)
    assert n is not None
    if kind is exp.LTE:
        return (1, n)
    if kind is exp.LT:
        return (1, n - 1)
    if kind is exp.EQ:
        return (n, n)
    return None


class OverPlanning:
    """The planner's methods for OVER: the rank filter, the Rank node, the OverAggregate."""

    if TYPE_CHECKING:  # provided by SqlPlanner
        t_env: TableEnvironment
        _rank_ranges: dict[int, tuple[str, int, int, bool]]

        def _rex(
            self,
            e: Any,
            scope: Scope,
            source: PlanNode,
            aggregates: bool,
            aliases: dict[str, Any] | None = None,
        ) -> Rex: ...

        def _invalid(self, node: Any, message: str) -> Exception: ...

    def _rank_filter(self, tree: Any, cond: Any) -> Any:
        """``SELECT .. FROM (SELECT .., ROW_NUMBER() OVER (..) AS rn ..) WHERE rn <= N``: the rank range
        is handed to the subquery's planning (a Rank node, as Flink's planner pushes the filter into
        it); returns the rest of the condition."""
        from_ = tree.args.get("from_")
        inner = from_.this.this if from_ is not None and isinstance(from_.this, exp.Subquery) else None
        if not isinstance(inner, exp.Select):
            return cond
        alias = next(
            (
                i.alias
                for i in inner.expressions
                if isinstance(i, exp.Alias)
                and isinstance(i.this, exp.Window)
                and isinstance(i.this.this, RANK_FUNCTIONS)
            ),
            None,
        )
        if alias is None or cond is None:
            return cond
        conjuncts = list(cond.flatten()) if isinstance(cond, exp.And) else [cond]
        start, end, rest = 1, None, []
        for c in conjuncts:
            bound = _rank_bound(c, alias)
            if bound is None:
                rest.append(c)
            else:
                start, end = max(start, bound[0]), bound[1] if end is None else min(end, bound[1])
        if end is None:
            return cond
        referenced = any(
            isinstance(c, exp.Star)
            or (isinstance(c, exp.Column) and (c.name == alias or isinstance(c.this, exp.Star)))
            for e in [*tree.expressions, *rest]
            for c in e.find_all(exp.Column, exp.Star)
        )
        self._rank_ranges[id(inner)] = (alias, start, end, referenced)
        return functools.reduce(lambda a, b: exp.And(this=a, expression=b), rest) if rest else None

    def _rank(
        self, tree: Any, source: PlanNode, scope: Scope, exprs: list[Any], names: list[str]
    ) -> tuple[PlanNode, Scope, list[Any]]:
        from flott.table.rank import Rank

        windows = [(i, e) for i, e in enumerate(exprs) if isinstance(e, exp.Window)]
        i, window = windows[0]
        rank_range = self._rank_ranges.pop(id(tree), None)
        if (
            len(windows) > 1
            or not isinstance(window.this, RANK_FUNCTIONS)
            or rank_range is None
            or rank_range[0] != names[i]
            or tree.args.get("group")
            or tree.args.get("having")
        ):
            raise NotYetSupportedError(
                f"the OVER aggregation '{window.sql('spark')}' is not yet supported by flott "
                "(only ROW_NUMBER() OVER (PARTITION BY .. ORDER BY ..) filtered by the outer query's "
                "rn <= N, rn < N, rn = N or rn BETWEEN a AND b: Top-N and deduplication)"
            )
        if window.args.get("spec") is not None:
            raise NotYetSupportedError("a frame clause on ROW_NUMBER() is not supported by flott")
        rank_type = RANK_TYPES[type(window.this)]
        if rank_type != "ROW_NUMBER" and self.t_env._streaming:
            raise table_error(f"{rank_type}() on streaming table is not supported currently")

        def column(e: Any) -> int:
            r = self._rex(e, scope, source, aggregates=False)
            if r.kind != "input":
                raise NotYetSupportedError(
                    f"ROW_NUMBER() OVER (..) on the expression {e.sql('spark')}: only columns are "
                    "supported by flott"
                )
            return int(r.index)

        partition = [column(p) for p in window.args.get("partition_by") or []]
        order_by = window.args.get("order")
        if order_by is None:
            raise self._invalid(window, f"{rank_type}() requires an ORDER BY in its OVER clause")
        order = [(column(o.this), not o.args.get("desc")) for o in order_by.expressions]
        _, start, end, output_number = rank_range
        node = Rank(source, partition, order, start, end, output_number, names[i], rank_type)
        new_scope = Scope([*scope.columns, ("", names[i], node.types[-1])])
        new_exprs = list(exprs)
        new_exprs[i] = exp.column(names[i], quoted=True)
        return node, new_scope, new_exprs

    def _over(
        self, tree: Any, source: PlanNode, scope: Scope, exprs: list[Any]
    ) -> tuple[PlanNode, Scope, list[Any]]:
        """OVER aggregations sharing one window: an OverAggregate, the calls replaced by its columns."""
        from flott.table.over_aggregate import OverAggregate, OverFrame
        from flott.table.plan import aggregate_plan
        from flott.table.sql_windows import interval_ms

        named = {w.name: w for w in tree.args.get("windows") or []}
        windows: set[tuple[tuple[int, ...], OverFrame]] = set()
        aggs: list[Rex] = []
        new_exprs = list(exprs)
        window: Any = None
        for i, e in enumerate(exprs):
            if not isinstance(e, exp.Window):
                if any(isinstance(w, exp.Window) for w in e.find_all(exp.Window)):
                    raise NotYetSupportedError(f"'{e.sql('spark')}': an OVER call inside an expression")
                continue
            w = e
            if e.args.get("alias") is not None and not (e.args.get("partition_by") or e.args.get("order")):
                if e.alias not in named:
                    raise self._invalid(e, f"Window '{e.alias}' not found")
                w = named[e.alias]
            order = w.args.get("order")
            if order is None or len(order.expressions) != 1 or order.expressions[0].args.get("desc"):
                raise NotYetSupportedError("OVER needs ORDER BY <one time attribute> ASC in flott")
            o = self._rex(order.expressions[0].this, scope, source, aggregates=False)
            if o.kind != "input" or o.index != source.rowtime:
                raise NotYetSupportedError(
                    "OVER aggregations ordered by anything but an event-time attribute are not yet "
                    "supported by flott"
                )
            spec = w.args.get("spec")
            kind = spec.args.get("kind", "RANGE").upper() if spec is not None else "RANGE"
            start = spec.args.get("start") if spec is not None else "UNBOUNDED"
            end = spec.args.get("end") if spec is not None else "CURRENT ROW"
            side = spec.args.get("start_side", "PRECEDING") if spec is not None else "PRECEDING"
            if end != "CURRENT ROW" or side != "PRECEDING":
                raise NotYetSupportedError("OVER frames must end at CURRENT ROW in flott")
            preceding: int | None = None
            if start != "UNBOUNDED" and kind == "ROWS":
                if not (isinstance(start, exp.Literal) and not start.is_string and str(start.this).isdigit()):
                    raise self._invalid(e, f"ROWS BETWEEN {start} PRECEDING: the bound must be a row count")
                preceding = int(str(start.this))
            elif start != "UNBOUNDED":
                preceding = interval_ms(start, "RANGE preceding")
            partition = [
                self._rex(p, scope, source, aggregates=False) for p in w.args.get("partition_by") or []
            ]
            if any(p.kind != "input" for p in partition):
                raise NotYetSupportedError("OVER (PARTITION BY <expression>): only columns are supported")
            frame = OverFrame(kind, preceding)
            windows.add((tuple(int(p.index) for p in partition), frame))
            window = ([int(p.index) for p in partition], frame)
            agg = self._rex(e.this, scope, source, aggregates=True)
            if agg.kind != "agg" or agg.value not in ("count", "sum", "min", "max", "avg") or agg.distinct:
                raise NotYetSupportedError(f"'{e.this.sql('spark')}' OVER: only COUNT/SUM/MIN/MAX/AVG")
            aggs.append(agg)
            new_exprs[i] = exp.column(f"$over{len(aggs) - 1}", quoted=True)
        if len(windows) != 1:
            raise NotYetSupportedError("OVER aggregations over different windows in one SELECT")
        width = len(source.names)
        ids = [Rex("input", t, index=k) for k, t in enumerate(source.types)]
        agg_names = [f"$over{k}" for k in range(len(aggs))]
        grouped = aggregate_plan(source, ids, aggs, list(source.names), agg_names)
        over = OverAggregate(
            grouped.input, width, window[0], window[1], grouped.specs, agg_names, [a.type for a in aggs]
        )
        added = [("", n, a.type) for n, a in zip(agg_names, aggs, strict=True)]
        new_scope = Scope([*scope.columns, *added])
        return over, new_scope, new_exprs
