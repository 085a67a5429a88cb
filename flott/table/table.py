"""``Table`` and ``GroupedTable``: the Table API's relational operations, each building a plan node.

Every method resolves its expressions against the input's columns at once, so a wrong column fails
where the user wrote it (as in Flink: ``Cannot resolve field [x], input field list:[a, b].``).
Nothing runs until ``execute()``, ``execute_insert()`` or a TableResult asks for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flott.table.expression import Expression
from flott.table.plan import (
    Calc,
    PlanNode,
    Sort,
    Union,
    aggregate_plan,
    collect_aggregates,
    refuse,
    rewrite_over_aggregate,
)
from flott.table.planner import Resolver, Rex, validation_error
from flott.table.schema import ResolvedSchema, TableSchema

if TYPE_CHECKING:
    from flott.table.table_environment import TableEnvironment
    from flott.table.table_result import TableResult

__all__ = ["GroupedTable", "Table"]


def _name_of(e: Expression, i: int) -> str:
    """Flink's projection naming: a column keeps its name, an alias gives one, a cast of a column
    is ``name-TYPE``, anything else ``_c<i>``."""
    if e.kind == "alias":
        return e.names[0]
    if e.kind == "col":
        return str(e.value)
    if e.kind == "cast" and e.args[0].kind == "col":
        return f"{e.args[0].value}-{e.data_type}"
    if e.kind == "call" and e.value == "get" and e.args[0].kind == "col" and e.args[1].kind == "lit":
        key = e.args[1].value  # Flink: p$name, p$_1 for a field taken by index
        return f"{e.args[0].value}${key}" if isinstance(key, str) else f"{e.args[0].value}$_{key}"
    return f"_c{i}"


class Table:
    def __init__(self, node: PlanNode, t_env: TableEnvironment) -> None:
        self._node = node
        self._t_env = t_env

    # --- introspection --------------------------------------------------------------------------

    def get_schema(self) -> TableSchema:
        return TableSchema(self._node.names, self._node.types, getattr(self._node, "computed_sql", None))

    def get_resolved_schema(self) -> ResolvedSchema:
        return ResolvedSchema(self._node.names, self._node.types)

    def print_schema(self) -> None:
        print(self.get_resolved_schema())

    def __str__(self) -> str:
        return f"UnnamedTable${id(self) % 1000}"

    def _resolver(self, aggregates: bool = False) -> Resolver:
        return Resolver(self._node.names, self._node.types, self._t_env._functions, aggregates)

    def _expand(self, fields: tuple[Any, ...]) -> list[Expression]:
        out: list[Expression] = []
        for f in fields:
            if isinstance(f, str):
                raise TypeError("string expressions are not supported by PyFlink 2.x: use col('name')")
            if isinstance(f, Expression) and (f.kind == "star" or (f.kind == "col" and f.value == "*")):
                out.extend(Expression("col", n) for n in self._node.names)
            else:
                out.append(f if isinstance(f, Expression) else Expression("lit", f))
        return out

    # --- projections and filters ----------------------------------------------------------------

    def select(self, *fields: Expression) -> Table:
        exprs = self._expand(fields)
        resolver = self._resolver(aggregates=True)
        rexes = [resolver.resolve(e) for e in exprs]
        names = [_name_of(e, i) for i, e in enumerate(exprs)]
        aggs: list[Rex] = []
        for r in rexes:
            collect_aggregates(r, aggs)
        if aggs:
            return self._aggregate([], [], rexes, names)
        return Table(Calc(self._node, rexes, names), self._t_env)

    def _aggregate(
        self,
        key_rexes: list[Rex],
        key_names: list[str],
        rexes: list[Rex],
        names: list[str],
        having: Rex | None = None,
        not_grouped: Any = None,
    ) -> Table:
        aggs: list[Rex] = []
        for r in rexes:
            collect_aggregates(r, aggs)
        if having is not None:
            collect_aggregates(having, aggs)

        def table_not_grouped(rex: Rex) -> Exception:
            return validation_error(
                f"Cannot resolve field [{self._node.names[rex.index]}], input field list:"
                f"[{', '.join(key_names + [f'EXPR${i}' for i in range(len(aggs))])}]."
            )

        ng = not_grouped or table_not_grouped
        agg_node = aggregate_plan(
            self._node, key_rexes, aggs, key_names, [f"EXPR${i}" for i in range(len(aggs))]
        )
        projections = [rewrite_over_aggregate(r, key_rexes, aggs, ng) for r in rexes]
        condition = rewrite_over_aggregate(having, key_rexes, aggs, ng) if having is not None else None
        return Table(Calc(agg_node, projections, names, condition), self._t_env)

    def where(self, predicate: Expression) -> Table:
        rex = self._resolver().resolve(predicate)
        if rex.type.type_root != "BOOLEAN":
            raise validation_error(
                "Filter operation requires a boolean expression as input, "
                f"but {predicate} is of type {rex.type}"
            )
        from flott.table.join import CrossJoin, plan_join

        if isinstance(self._node, CrossJoin):  # join(...).where(...): the predicate is the join's
            node = self._node
            return Table(plan_join(node.left, node.right, rex, "INNER", list(node.names)), self._t_env)
        projections = [Rex("input", t, index=i) for i, t in enumerate(self._node.types)]
        return Table(Calc(self._node, projections, list(self._node.names), rex), self._t_env)

    def filter(self, predicate: Expression) -> Table:
        return self.where(predicate)

    def _identity(self) -> tuple[list[Rex], list[str]]:
        return [Rex("input", t, index=i) for i, t in enumerate(self._node.types)], list(self._node.names)

    def add_columns(self, *fields: Expression) -> Table:
        projections, names = self._identity()
        resolver = self._resolver()
        for i, e in enumerate(self._expand(fields)):
            name = _name_of(e, len(names) + i)
            if name in names:
                raise validation_error(
                    f"Field '{name}' already exists in the table; use add_or_replace_columns"
                )
            projections.append(resolver.resolve(e))
            names.append(name)
        return Table(Calc(self._node, projections, names), self._t_env)

    def add_or_replace_columns(self, *fields: Expression) -> Table:
        projections, names = self._identity()
        resolver = self._resolver()
        for i, e in enumerate(self._expand(fields)):
            name = _name_of(e, len(names) + i)
            rex = resolver.resolve(e)
            if name in names:
                projections[names.index(name)] = rex
            else:
                projections.append(rex)
                names.append(name)
        return Table(Calc(self._node, projections, names), self._t_env)

    def rename_columns(self, *fields: Expression) -> Table:
        projections, names = self._identity()
        for e in fields:
            if e.kind != "alias" or e.args[0].kind != "col":
                raise validation_error(f"Invalid AS, parameters are: [{e}].")
            old = e.args[0].value
            if old not in names:
                raise validation_error(f"Field '{old}' could not be resolved.")
            names[names.index(old)] = e.names[0]
        return Table(Calc(self._node, projections, names), self._t_env)

    def drop_columns(self, *fields: Expression) -> Table:
        drop = set()
        for e in fields:
            if e.kind != "col":
                raise validation_error(f"Unexpected non-field expression in drop_columns: {e}")
            if e.value not in self._node.names:
                raise validation_error(
                    f"Cannot resolve field [{e.value}], input field list:[{', '.join(self._node.names)}]."
                )
            drop.add(e.value)
        projections, names = self._identity()
        keep = [i for i, n in enumerate(names) if n not in drop]
        return Table(Calc(self._node, [projections[i] for i in keep], [names[i] for i in keep]), self._t_env)

    def alias(self, field: str, *fields: str) -> Table:
        new = [field, *fields]
        if len(new) > len(self._node.names):
            raise validation_error("Aliasing more fields than we actually have.")
        projections, names = self._identity()
        names[: len(new)] = new
        return Table(Calc(self._node, projections, names), self._t_env)

    def distinct(self) -> Table:
        keys, names = self._identity()
        return Table(aggregate_plan(self._node, keys, [], names, []), self._t_env)

    # --- grouping ---------------------------------------------------------------------------------

    def group_by(self, *fields: Expression) -> GroupedTable:
        return GroupedTable(self, list(fields))

    # --- set operations ---------------------------------------------------------------------------

    def union_all(self, right: Table) -> Table:
        return Table(Union([self._node, right._node]), self._t_env)

    def union(self, right: Table) -> Table:
        return Table(Union([self._node, right._node]), self._t_env).distinct()

    # --- refused for now --------------------------------------------------------------------------

    def join(self, right: Table, join_predicate: Expression | None = None) -> Table:
        from flott.table.join import join_tables

        return join_tables(self, right, join_predicate, "INNER")

    def left_outer_join(self, right: Table, join_predicate: Expression | None = None) -> Table:
        from flott.table.join import join_tables

        return join_tables(self, right, join_predicate, "LEFT")

    def right_outer_join(self, right: Table, join_predicate: Expression) -> Table:
        from flott.table.join import join_tables

        return join_tables(self, right, join_predicate, "RIGHT")

    def full_outer_join(self, right: Table, join_predicate: Expression) -> Table:
        from flott.table.join import join_tables

        return join_tables(self, right, join_predicate, "FULL")

    def order_by(self, *fields: Expression | str) -> Table:
        """Sorted by columns (``col("a").desc`` for descending; ascending by default), in batch
        mode; streaming sorts (on time attributes) are refused when the job is planned."""
        from flott.table.expressions import col

        keys: list[tuple[int, bool]] = []
        for field in fields:
            e = col(field) if isinstance(field, str) else field
            ascending = True
            if e.kind == "call" and e.value in ("asc", "desc"):
                ascending, e = e.value == "asc", e.args[0]
            rex = self._resolver().resolve(e)
            if rex.kind != "input":
                raise refuse(f"Table.order_by of the expression '{e}' (order by columns)")
            keys.append((rex.index, ascending))
        return Table(Sort(self._node, keys, 0, None), self._t_env)

    def offset(self, offset: int) -> Table:
        """Skips the first ``offset`` rows of the (sorted) result."""
        return self._limited(offset, None)

    def fetch(self, fetch: int) -> Table:
        """The first ``fetch`` rows of the (sorted) result (after an offset, if any)."""
        return self._limited(0, fetch)

    def limit(self, fetch: int, offset: int = 0) -> Table:
        return self._limited(offset, fetch)

    def _limited(self, offset: int, fetch: int | None) -> Table:
        if offset < 0:
            raise validation_error("Offset should be greater than or equal to zero.")
        if fetch is not None and fetch < 0:
            raise validation_error("Fetch should be greater than or equal to zero.")
        node = self._node
        if isinstance(node, Sort) and node.limit is None:  # order_by(..).offset(..).fetch(..)
            return Table(Sort(node.input, node.keys, node.offset + offset, fetch), self._t_env)
        if isinstance(node, Sort) and fetch is None:
            limit = None if node.limit is None else max(0, node.limit - offset)
            return Table(Sort(node.input, node.keys, node.offset + offset, limit), self._t_env)
        return Table(Sort(node, [], offset, fetch), self._t_env)

    def window(self, window: Any) -> Any:
        """A group window (Tumble/Slide/Session on an event-time attribute): group_by(col(alias), ...)."""
        from flott.table.window import GroupWindowedTable

        return GroupWindowedTable(self, window)

    def over_window(self, *over_windows: Any) -> Any:
        """One over window (flott.table.over_window): ``select`` then computes its over calls."""
        from flott.table.over_window import over_windowed

        return over_windowed(self, over_windows)

    def map(self, func: Any) -> Table:
        raise refuse("Table.map")

    def flat_map(self, func: Any) -> Table:
        from flott.table.lateral import flat_map

        return flat_map(self, func)

    def join_lateral(self, table_function_call: Any, join_predicate: Any = None) -> Table:
        from flott.table.lateral import join_lateral

        return join_lateral(self, table_function_call, join_predicate, outer=False)

    def left_outer_join_lateral(self, table_function_call: Any, join_predicate: Any = None) -> Table:
        from flott.table.lateral import join_lateral

        return join_lateral(self, table_function_call, join_predicate, outer=True)

    def flat_aggregate(self, func: Any) -> Any:
        from flott.table.table_aggregate import flat_aggregate

        return flat_aggregate(self, [], func)

    def minus(self, right: Table) -> Table:
        raise refuse("Table.minus")

    def intersect(self, right: Table) -> Table:
        raise refuse("Table.intersect")

    # --- execution --------------------------------------------------------------------------------

    def execute(self) -> TableResult:
        return self._t_env._execute_collect(self._node)

    def execute_insert(self, table_path_or_descriptor: Any, overwrite: bool = False) -> TableResult:
        if overwrite:
            raise refuse("INSERT OVERWRITE")
        return self._t_env._execute_inserts([(table_path_or_descriptor, self)])

    def to_pandas(self) -> Any:
        """Collects the table into a pandas DataFrame with PyFlink's dtypes (see pandas_conversion)."""
        from flott.table.pandas_conversion import rows_to_frame

        return rows_to_frame(self)

    def explain(self, *extra_details: Any) -> str:
        from flott.table.plan import explain_plan

        if extra_details:
            raise refuse("Table.explain with ExplainDetails")
        return explain_plan(self._node)


class GroupedTable:
    def __init__(self, table: Table, keys: list[Expression]) -> None:
        self._table = table
        self._keys = keys

    def select(self, *fields: Expression) -> Table:
        t = self._table
        resolver = t._resolver(aggregates=False)
        key_rexes = [resolver.resolve(k) for k in self._keys]
        key_names = [k.names[0] if k.kind == "alias" else str(k) for k in self._keys]
        exprs = t._expand(fields)
        agg_resolver = t._resolver(aggregates=True)
        rexes = [agg_resolver.resolve(e) for e in exprs]
        names = [_name_of(e, i) for i, e in enumerate(exprs)]
        return t._aggregate(key_rexes, key_names, rexes, names)

    def aggregate(self, func: Any) -> Any:
        raise refuse("GroupedTable.aggregate")

    def flat_aggregate(self, func: Any) -> Any:
        from flott.table.table_aggregate import flat_aggregate

        return flat_aggregate(self._table, self._keys, func)
