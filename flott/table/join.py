"""Regular joins on equality predicates: Flink's StreamingJoinOperator on keyed state.

Inner and left outer joins run in both modes; a right outer join is a left one with the sides
swapped; a full outer join runs in batch mode (in streaming it is refused for now).

Both inputs are keyed by their join-key columns and connected; each side keeps its rows per key in
keyed state (row -> [multiplicity, number of matches on the other side]). In streaming mode an
accumulating row (+I/+U) joins the other side's rows and emits +I, a retracting row (-U/-D) emits
-D; for a left outer join a left row without matches emits ``+I[left, null...]``, which the first
matching right row retracts (``-D``) before emitting the joined row, and the last retracted match
brings back. In batch mode each key is joined once, when the input ends, so only +I rows leave.
Non-equality conditions of an inner join become a filter after it; an outer join needs them in the
join itself, which is refused for now.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from flott.datastream.functions import KeyedCoProcessFunction
from flott.datastream.state import MapStateDescriptor, ValueStateDescriptor
from flott.errors import NotYetSupportedError
from flott.table import runtime
from flott.table.plan import Calc, PlanNode, TranslationContext
from flott.table.planner import Rex, validation_error

if TYPE_CHECKING:
    from flott.table.table import Table


class JoinFunction(KeyedCoProcessFunction):
    """In streaming mode each side's rows of a key are map state entries ``row -> [multiplicity,
    matches]`` (matches counted for the outer side only), as Flink's JoinRecordStateView keeps
    them: with ``table.exec.state.ttl`` every entry expires on its own, a row written (or, on an
    outer side, re-counted) longer ago than the TTL is gone. In batch mode each side's rows wait in
    one value until the input ends."""

    def __init__(
        self,
        left_outer: bool,
        left_width: int,
        right_width: int,
        batch: bool,
        right_outer: bool = False,
        state_ttl_ms: int = 0,
    ) -> None:
        self.left_outer = left_outer
        self.right_outer = right_outer
        self.left_nulls = (None,) * left_width
        self.right_nulls = (None,) * right_width
        self.batch = batch
        self.state_ttl_ms = state_ttl_ms
        self._left: Any = None
        self._right: Any = None

    def open(self, runtime_context: Any) -> None:
        if self.batch:
            self._left = runtime_context.get_state(ValueStateDescriptor("join-left", None))
            self._right = runtime_context.get_state(ValueStateDescriptor("join-right", None))
            return
        for side in ("left", "right"):
            descriptor = MapStateDescriptor(f"join-{side}-rows", None, None)
            runtime.with_state_ttl(descriptor, self.state_ttl_ms)
            setattr(self, f"_{side}", runtime_context.get_map_state(descriptor))

    @staticmethod
    def _add(rows: dict[Any, list[int]], row: Any, matches: int) -> None:
        entry = rows.get(row)
        if entry is None:
            rows[row] = [1, matches]
        else:
            entry[0] += 1

    @staticmethod
    def _remove(rows: dict[Any, list[int]], row: Any) -> bool:
        entry = rows.get(row)
        if entry is None:
            return False
        entry[0] -= 1
        if entry[0] <= 0:
            del rows[row]
        return True

    @staticmethod
    def _put(state: Any, row: Any, matches: int) -> None:
        entry = state.get(row)
        state.put(row, [1, matches] if entry is None else [entry[0] + 1, entry[1]])

    @staticmethod
    def _take(state: Any, row: Any) -> bool:
        entry = state.get(row)
        if entry is None:
            return False
        if entry[0] <= 1:
            state.remove(row)
        else:
            state.put(row, [entry[0] - 1, entry[1]])
        return True

    def _buffer(self, state: Any, kind: int, row: Any, ctx: Any) -> None:
        rows = state.value() or {}
        if kind in (0, 2):
            self._add(rows, row, 0)
        else:
            self._remove(rows, row)
        state.update(rows)
        ctx.timer_service().register_event_time_timer(runtime.MAX_WATERMARK)

    def process_element1(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        kind, row = value
        if self.batch:
            self._buffer(self._left, kind, row, ctx)
            return None
        rights = list(self._right.items())
        matches = sum(e[0] for _, e in rights)
        accumulate = kind in (0, 2)
        out_kind = 0 if accumulate else 3
        if accumulate:
            self._put(self._left, row, matches)
        elif not self._take(self._left, row):
            return None
        out: list[Any] = []
        for r, (n, _) in rights:
            out.extend([(out_kind, row + r)] * n)
        if self.left_outer and matches == 0:
            out.append((out_kind, row + self.right_nulls))
        return out

    def process_element2(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        kind, row = value
        if self.batch:
            self._buffer(self._right, kind, row, ctx)
            return None
        out: list[Any] = []
        if kind in (0, 2):
            self._put(self._right, row, 0)
            for l_row, (n, assoc) in list(self._left.items()):
                if self.left_outer:
                    if assoc == 0:
                        out.extend([(3, l_row + self.right_nulls)] * n)
                    self._left.put(l_row, [n, assoc + 1])
                out.extend([(0, l_row + row)] * n)
        else:
            if not self._take(self._right, row):
                return None
            for l_row, (n, assoc) in list(self._left.items()):
                out.extend([(3, l_row + row)] * n)
                if self.left_outer:
                    self._left.put(l_row, [n, assoc - 1])
                    if assoc == 1:
                        out.extend([(0, l_row + self.right_nulls)] * n)
        return out

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any] | None:
        lefts = self._left.value() or {}
        rights = self._right.value() or {}
        self._left.clear()
        self._right.clear()
        out: list[Any] = []
        for l_row, (n, _) in lefts.items():
            if rights:
                for r, (m, _) in rights.items():
                    out.extend([(0, l_row + r)] * (n * m))
            elif self.left_outer:
                out.extend([(0, l_row + self.right_nulls)] * n)
        if not lefts and self.right_outer:
            for r, (m, _) in rights.items():
                out.extend([(0, self.left_nulls + r)] * m)
        return out


class Join(PlanNode):
    def __init__(
        self,
        left: PlanNode,
        right: PlanNode,
        left_outer: bool,
        right_outer: bool,
        left_keys: list[int],
        right_keys: list[int],
        names: list[str],
    ) -> None:
        self.left, self.right, self.left_outer, self.right_outer = left, right, left_outer, right_outer
        self.left_keys, self.right_keys = left_keys, right_keys
        self.names = names
        right_types = [t.with_nullability(True) for t in right.types] if left_outer else list(right.types)
        left_types = [t.with_nullability(True) for t in left.types] if right_outer else list(left.types)
        self.types = left_types + right_types

    def is_updating(self, streaming: bool) -> bool:
        return streaming and (
            self.left_outer or self.left.is_updating(streaming) or self.right.is_updating(streaming)
        )

    def _translate(self, ctx: TranslationContext) -> Any:
        left = self.left.translate(ctx)
        right = self.right.translate(ctx)
        if self.right_outer and ctx.streaming:
            raise NotYetSupportedError("FULL OUTER JOIN in streaming mode is not yet supported by flott")
        fn = JoinFunction(
            self.left_outer,
            len(self.left.types),
            len(self.right.types),
            not ctx.streaming,
            self.right_outer,
            ctx.state_ttl_ms,
        )
        joined = (
            left.connect(right)
            .key_by(
                runtime.TupleKeySelector(tuple(self.left_keys)),
                runtime.TupleKeySelector(tuple(self.right_keys)),
            )
            .process(fn)
        )
        return ctx.uid(joined.name("Join"), "join")


def split_condition(cond: Rex, left_width: int) -> tuple[list[tuple[int, int]], list[Rex]]:
    """The equalities between a left and a right column, and the rest of the conjunction."""
    conjuncts: list[Rex] = []

    def flatten(r: Rex) -> None:
        if r.kind == "call" and r.value == "and":
            for o in r.operands:
                flatten(o)
        else:
            conjuncts.append(r)

    flatten(cond)
    pairs: list[tuple[int, int]] = []
    rest: list[Rex] = []
    for c in conjuncts:
        if c.kind == "call" and c.value == "equals" and all(o.kind == "input" for o in c.operands):
            a, b = (o.index for o in c.operands)
            if a < left_width <= b:
                pairs.append((a, b - left_width))
                continue
            if b < left_width <= a:
                pairs.append((b, a - left_width))
                continue
        rest.append(c)
    return pairs, rest


class CrossJoin(PlanNode):
    """``left.join(right)`` before its predicate: Table API users write the join condition as a
    following ``where`` (Flink's planner pushes that filter into the join). ``Table.where`` plans
    the equi-join from it; a cross join that reaches translation is refused."""

    def __init__(self, left: PlanNode, right: PlanNode, names: list[str]) -> None:
        self.left, self.right, self.names = left, right, names
        self.types = list(left.types) + list(right.types)

    def is_updating(self, streaming: bool) -> bool:
        return self.left.is_updating(streaming) or self.right.is_updating(streaming)

    def _translate(self, ctx: TranslationContext) -> Any:
        raise NotYetSupportedError("a join without an equality predicate (a cross join) is not yet supported")


def plan_join(left: PlanNode, right: PlanNode, cond: Rex | None, kind: str, names: list[str]) -> PlanNode:
    """A Join on the equalities of ``cond`` (over left + right columns), the rest as a filter."""
    if kind not in ("INNER", "LEFT", "RIGHT", "FULL"):
        raise NotYetSupportedError(f"{kind} JOIN is not yet supported by flott")
    if cond is None:
        raise NotYetSupportedError("a join without an equality predicate (a cross join) is not yet supported")
    pairs, rest = split_condition(cond, len(left.types))
    if not pairs:
        raise NotYetSupportedError(
            "a join without an equality predicate between both sides is not yet supported"
        )
    if rest and kind != "INNER":
        raise NotYetSupportedError(
            "non-equality conditions in an outer join's ON clause are not yet supported"
        )
    for a, b in pairs:
        lt, rt = left.types[a], right.types[b]
        if lt.type_root != rt.type_root:
            raise NotYetSupportedError(
                f"a join on columns of different types ({lt} and {rt}) is not yet supported"
            )
    left_keys, right_keys = [a for a, _ in pairs], [b for _, b in pairs]
    node: PlanNode
    if kind == "RIGHT":  # a left join with the sides swapped, columns put back in order
        nl, nr = len(left.types), len(right.types)
        swapped = Join(right, left, True, False, right_keys, left_keys, names[nl:] + names[:nl])
        order = [nr + k for k in range(nl)] + list(range(nr))
        node = Calc(swapped, [Rex("input", swapped.types[i], index=i) for i in order], names)
    else:
        node = Join(left, right, kind in ("LEFT", "FULL"), kind == "FULL", left_keys, right_keys, names)
    if rest:
        cond_rest = rest[0]
        from flott.table.planner import make_call

        for r in rest[1:]:
            cond_rest = make_call("and", [cond_rest, r])
        ids = [Rex("input", t, index=i) for i, t in enumerate(node.types)]
        node = Calc(node, ids, list(node.names), cond_rest)
    return node


def join_tables(left: Table, right: Table, predicate: Any, kind: str) -> Table:
    from flott.table.planner import Resolver
    from flott.table.table import Table

    ln, rn = left._node, right._node
    clash = sorted(set(ln.names) & set(rn.names))
    if clash:
        raise validation_error(f"join relations with ambiguous names: {', '.join(clash)}")
    names = list(ln.names) + list(rn.names)
    resolver = Resolver(names, list(ln.types) + list(rn.types), left._t_env._functions)
    if predicate is None and kind == "INNER":
        return Table(CrossJoin(ln, rn, names), left._t_env)
    cond = resolver.resolve(predicate) if predicate is not None else None
    return Table(plan_join(ln, rn, cond, kind, names), left._t_env)
