"""Python table functions joined to their input row: the Table API's ``join_lateral`` /
``left_outer_join_lateral`` / ``flat_map`` and SQL's ``LATERAL TABLE(f(...))``.

A :class:`LateralJoin` is Flink's correlate: each input row calls the function with its arguments
and is joined with every row the function gives (an inner lateral join drops a row the function
gives nothing for; a left outer one keeps it once, the function's columns NULL). The row kind passes
through, so a correlate over an updating input retracts what it emitted for the retracted row.
Arguments are compiled into one function of the input row like a calc's projections.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import sqlglot

from flott.common.types import Row
from flott.datastream.functions import FlatMapFunction
from flott.errors import NotYetSupportedError
from flott.table import runtime
from flott.table.expression import Expression
from flott.table.plan import Calc, PlanNode, TranslationContext
from flott.table.planner import Resolver, Rex, calc_source, validation_error
from flott.table.types import DataType
from flott.table.udf import UserDefinedTableFunctionWrapper

if TYPE_CHECKING:
    from flott.table.table import Table


class CorrelateFunction(FlatMapFunction):
    def __init__(
        self, args: runtime.CompiledCode, fn: Any, outer: bool, width: int, field_names: list[str] | None
    ) -> None:
        self.args, self.fn, self.outer, self.width = args, fn, outer, width
        self.field_names = field_names
        """Set when the function takes the whole input row (``join_lateral(f.alias(...))``)."""
        self._args: Any = None

    def open(self, runtime_context: Any) -> None:
        self._args = self.args.function()

    def close(self) -> None:
        self.fn.close()

    def flat_map(self, value: Any) -> Iterator[Any]:
        kind, vals = value
        args = (self._args or self.args.function())(vals)
        if self.field_names is not None:
            row = Row(*vals)
            row.set_field_names(self.field_names)
            args = (row,)
        rows = self.fn(*args)
        for r in rows:
            if len(r) < self.width:  # PyFlink fails encoding it; more fields than declared it drops
                raise ValueError(
                    f"the table function {self.fn.fn!r} gave a row of {len(r)} field(s) {r!r} where its "
                    f"result_types declare {self.width}"
                )
            yield kind, (*vals, *r[: self.width])
        if self.outer and not rows:
            yield kind, (*vals, *([None] * self.width))


class LateralJoin(PlanNode):
    """The input's columns, then the table function's (named by the alias or the function)."""

    def __init__(
        self,
        input: PlanNode,
        fn: UserDefinedTableFunctionWrapper,
        args: list[Rex],
        names: list[str],
        outer: bool,
        row_input: bool = False,
    ) -> None:
        self.input, self.fn, self.args, self.outer, self.row_input = input, fn, args, outer, row_input
        self.names = [*input.names, *names]
        outer_types = [t.with_nullability(True) for t in fn.result_types] if outer else fn.result_types
        self.types: list[DataType] = [*input.types, *outer_types]
        self.rowtime = input.rowtime

    def is_updating(self, streaming: bool) -> bool:
        return self.input.is_updating(streaming)

    def _translate(self, ctx: TranslationContext) -> Any:
        consts: list[Any] = []
        source = calc_source(self.args, None, consts, [])
        fn = CorrelateFunction(
            runtime.CompiledCode(source, consts),
            self.fn.evaluator(),
            self.outer,
            len(self.fn.result_types),
            list(self.input.names) if self.row_input else None,
        )
        upstream = self.input.translate(ctx)
        out = upstream.flat_map(fn).name("Correlate")
        return ctx.uid(out.set_parallelism(upstream.transformation.parallelism), "correlate")


def _table_function(value: Any, functions: dict[str, Any]) -> UserDefinedTableFunctionWrapper:
    fn = functions.get(value.lower()) if isinstance(value, str) else value
    if isinstance(value, str) and fn is None:
        raise validation_error(f"Undefined function: {value}")
    if not isinstance(fn, UserDefinedTableFunctionWrapper):
        raise validation_error(
            f"{getattr(fn, '__name__', fn)} is not a table function: join_lateral, "
            "left_outer_join_lateral and flat_map take a @udtf call"
        )
    return fn


def _resolve_call(
    table: Table, call: Any, what: str
) -> tuple[UserDefinedTableFunctionWrapper, list[Rex], list[str] | None, bool]:
    """The function, its argument expressions, the alias names (None when not aliased) and whether
    it takes the whole row (a @udtf passed uncalled, as PyFlink's ``join_lateral(f.alias('a'))``)."""
    node = table._node
    if isinstance(call, UserDefinedTableFunctionWrapper):
        rows = [Rex("input", t, index=i) for i, t in enumerate(node.types)]
        return call, rows, call.alias_names, True
    if not isinstance(call, Expression):
        raise TypeError(f"{what} takes a table function call, got {type(call).__name__}")
    alias: list[str] | None = None
    if call.kind == "alias":
        alias, call = list(call.names), call.args[0]
    if call.kind != "call":
        raise validation_error(f"{what} needs a table function call, got {call}")
    fn = _table_function(call.value, table._t_env._functions)
    resolver = Resolver(node.names, node.types, table._t_env._functions)
    return fn, [resolver.resolve(a) for a in call.args], alias, False


def _result_names(fn: UserDefinedTableFunctionWrapper, alias: list[str] | None) -> list[str]:
    if alias is None:
        return list(fn.result_names)
    if len(alias) != len(fn.result_types):
        raise validation_error(
            f"List of column aliases must have same degree as table; the returned table of function "
            f"'{fn.name or getattr(fn, '__name__', fn)}' has {len(fn.result_types)} columns, "
            f"whereas alias list has {len(alias)} columns"
        )
    return alias


def join_lateral(table: Table, call: Any, predicate: Any, outer: bool) -> Table:
    from flott.table.table import Table

    what = "left_outer_join_lateral" if outer else "join_lateral"
    fn, args, alias, row_input = _resolve_call(table, call, what)
    if row_input and alias is None:
        raise AttributeError(
            "table_function_call must be followed by a alias function e.g. table_function.alias(\"a\", \"b\")"
        )
    names = _result_names(fn, alias)
    clash = sorted(set(names) & set(table._node.names))
    if clash:
        raise validation_error(f"join relations with ambiguous names: [{', '.join(clash)}]")
    node = LateralJoin(table._node, fn, args, names, outer, row_input)
    if predicate is None:
        return Table(node, table._t_env)
    resolver = Resolver(node.names, node.types, table._t_env._functions)
    cond = resolver.resolve(predicate)
    if cond.kind == "lit" and cond.value is True:
        return Table(node, table._t_env)
    if outer:
        raise validation_error(
            "Predicate for lateral left outer join with table function can only be empty or literal true."
        )
    if not _has_equi_join(cond, len(table._node.names)):
        raise validation_error(
            f"Invalid join condition: {predicate}. At least one equi-join predicate is required."
        )
    ids = [Rex("input", t, index=i) for i, t in enumerate(node.types)]
    return Table(Calc(node, ids, list(node.names), cond), table._t_env)


def _has_equi_join(cond: Rex, width: int) -> bool:
    """Flink's rule for a lateral join's predicate: an equality of a left and a right column, at the
    top or under ANDs."""
    if cond.kind != "call":
        return False
    if cond.value == "and":
        return any(_has_equi_join(o, width) for o in cond.operands)
    if cond.value == "equals" and all(o.kind == "input" for o in cond.operands):
        a, b = (int(o.index) for o in cond.operands)  # type: ignore[arg-type]
        return (a < width) != (b < width)
    return False


def flat_map(table: Table, func: Any) -> Table:
    """Only the function's columns: a lateral join projected onto its right side."""
    from flott.table.table import Table

    if isinstance(func, Expression) and func.kind == "alias":
        raise validation_error("Only a table function can be used in the flatMap operator.")
    fn, args, alias, row_input = _resolve_call(table, func, "flat_map")
    if row_input:
        alias = None  # PyFlink calls the function on the row without its alias here
    node = LateralJoin(table._node, fn, args, _result_names(fn, alias), False, row_input)
    width = len(table._node.names)
    keep = [Rex("input", node.types[i], index=i) for i in range(width, len(node.names))]
    return Table(Calc(node, keep, node.names[width:]), table._t_env)


# --------------------------------------------------------------------------- SQL

_FLINK_SCALAR_BUILTINS = frozenset(
    {"SPLIT", "UPPER", "LOWER", "CONCAT", "CONCAT_WS", "SUBSTRING", "REPLACE", "TRIM", "REVERSE", "REPEAT"}
    | {"LPAD", "RPAD", "ABS", "POWER", "MOD", "COALESCE", "IF", "CAST", "INITCAP", "SPLIT_INDEX"}
)
"""Flink built-in scalar functions a few table functions get named like: Flink resolves the built-in
first (before a temporary catalog function of that name) and refuses it in LATERAL TABLE."""

_LATERAL_CALL = re.compile(r"\bLATERAL\s+TABLE\s*\(\s*$", re.IGNORECASE)


def rename_lateral_calls(text: str) -> tuple[str, dict[str, str]]:
    """``LATERAL TABLE(split(s))``: sqlglot parses some function names as its own built-ins (SPLIT
    wants two arguments), so each name right after ``LATERAL TABLE(`` becomes a placeholder
    ``_<n>__`` as long as the name (positions kept for error messages). Returns the text and the
    placeholder → user name map."""
    try:
        tokens = list(sqlglot.Dialect.get_or_raise("spark").tokenize(text))
    except sqlglot.errors.TokenError:
        return text, {}
    names: dict[str, str] = {}
    out = text
    for prev2, prev, tok in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if prev.token_type.name != "L_PAREN" or prev2.text.upper() != "TABLE":
            continue
        if not _LATERAL_CALL.search(text[: prev.end + 1]):
            continue
        name = text[tok.start : tok.end + 1]
        placeholder = f"_{len(names)}".ljust(len(name), "_")
        if len(name) < len(placeholder) or not re.fullmatch(r"\w+", name):
            continue
        names[placeholder] = name
        out = out[: tok.start] + placeholder + out[tok.end + 1 :]
    return out, names


def sql_lateral(
    planner: Any, left: PlanNode, scope: Any, lateral: Any, side: str
) -> tuple[PlanNode, list[tuple[str, str, DataType]]]:
    """``[CROSS|LEFT] JOIN LATERAL TABLE(f(args)) [AS] T(a, b)`` (or ``, LATERAL TABLE(...)``): the
    lateral join and its new scope columns (the caller resolves ``ON`` over them)."""
    from sqlglot import exp

    table_call = lateral.this
    if not (isinstance(table_call, exp.Anonymous) and table_call.name.upper() == "TABLE"):
        raise NotYetSupportedError(f"LATERAL {table_call.sql('spark')} is not yet supported by flott")
    if len(table_call.expressions) != 1 or not isinstance(table_call.expressions[0], exp.Anonymous):
        raise NotYetSupportedError(
            f"LATERAL {table_call.sql('spark')}: only LATERAL TABLE(<function>(<args>)) is supported by flott"
        )
    call = table_call.expressions[0]
    name = planner.lateral_names.get(call.name, call.name)
    fn = planner.t_env._functions.get(name.lower())
    args = [planner._rex(a, scope, left, aggregates=False) for a in call.expressions]
    if name.upper() in _FLINK_SCALAR_BUILTINS:
        raise validation_error(
            f"SQL validation failed. Function '{name}' cannot be used as a table function."
        )
    if not isinstance(fn, UserDefinedTableFunctionWrapper):
        signature = ", ".join(f"<{_type_family(a.type)}>" for a in args)
        raise validation_error(
            f"SQL validation failed. {_call_span(planner, call)}No match found for function signature "
            f"{name}({signature})"
        )
    alias = lateral.args.get("alias")
    columns = [c.name for c in alias.columns] if alias is not None and alias.columns else None
    if columns is not None and len(columns) != len(fn.result_types):
        listed = ", ".join(f"'{n}'" for n in fn.result_names)
        raise planner._invalid(
            alias.columns[0],
            f"List of column aliases must have same degree as table; table has {len(fn.result_types)} "
            f"columns ({listed}), whereas alias list has {len(columns)} columns",
        )
    names = _result_names(fn, columns)
    qualifier = alias.name if alias is not None and alias.name else name
    outer = side == "LEFT"
    if side not in ("", "LEFT"):
        raise NotYetSupportedError(f"{side} JOIN LATERAL TABLE is not yet supported by flott")
    unique: list[str] = []
    for n in names:  # a column name the left side has too gets a suffix in the plan (T.s stays s in SQL)
        candidate, k = n, 0
        while candidate in left.names or candidate in unique:
            candidate, k = f"{n}{k}", k + 1
        unique.append(candidate)
    node = LateralJoin(left, fn, args, unique, outer)
    new_scope = [(qualifier, n, t) for n, t in zip(names, node.types[len(left.names) :], strict=True)]
    return node, new_scope


def _type_family(t: DataType) -> str:
    """Calcite's name for an argument's type family in "No match found for function signature"."""
    root = t.type_root
    if root in ("CHAR", "VARCHAR"):
        return "CHARACTER"
    if root in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL"):
        return "NUMERIC"
    if root == "BOOLEAN":
        return "BOOLEAN"
    return "ANY"


def _call_span(planner: Any, call: Any) -> str:
    """``From line a, column b to line c, column d: `` over the whole call ``f(args)``, as Calcite
    reports an unknown function (sqlglot's position covers only the name)."""
    meta = call.meta
    if "start" not in meta:
        return ""
    text, depth, end = planner.text, 0, meta["end"]
    for i in range(meta["end"] + 1, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                end = i
                break
    l1, c1 = planner._position(meta["start"])
    l2, c2 = planner._position(end)
    return f"From line {l1}, column {c1} to line {l2}, column {c2}: "
