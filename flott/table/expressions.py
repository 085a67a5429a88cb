"""PyFlink's expression functions (``col``, ``lit``, ``call``, ``if_then_else`` ...), building
:class:`~flott.table.expression.Expression` trees for the planner to resolve."""

from __future__ import annotations

from typing import Any

from flott.table.expression import Expression, _expr

__all__ = [
    "CURRENT_RANGE",
    "CURRENT_ROW",
    "UNBOUNDED_RANGE",
    "UNBOUNDED_ROW",
    "and_",
    "call",
    "coalesce",
    "col",
    "concat",
    "concat_ws",
    "if_then_else",
    "lit",
    "negative",
    "not_",
    "null_of",
    "or_",
    "row_interval",
    "with_all_columns",
]


UNBOUNDED_ROW = Expression("over_bound", "UNBOUNDED_ROW")
"""An over window's ``preceding``: every row of the partition before the current one (ROWS)."""
UNBOUNDED_RANGE = Expression("over_bound", "UNBOUNDED_RANGE")
"""An over window's ``preceding``: every row up to the current row's time (RANGE; the default)."""
CURRENT_ROW = Expression("over_bound", "CURRENT_ROW")
"""An over window's ``following`` for a ROWS frame: it ends at the current row."""
CURRENT_RANGE = Expression("over_bound", "CURRENT_RANGE")
"""An over window's ``following`` for a RANGE frame: it ends with the current row's peers."""


def row_interval(rows: int) -> Expression:
    """An over window's ``preceding`` as a row count: the current row and ``rows`` rows before it."""
    return Expression("row_interval", rows)


def col(name: str) -> Expression:
    """A reference to the input column ``name``."""
    return Expression("col", name)


def lit(v: Any, data_type: Any = None) -> Expression:
    """A literal; with ``data_type`` the literal is cast to it."""
    e = Expression("lit", v)
    return e if data_type is None else Expression("cast", None, [e], data_type=data_type)


def and_(predicate0: Any, predicate1: Any, *predicates: Any) -> Expression:
    out = Expression("call", "and", [_expr(predicate0), _expr(predicate1)])
    for p in predicates:
        out = Expression("call", "and", [out, _expr(p)])
    return out


def or_(predicate0: Any, predicate1: Any, *predicates: Any) -> Expression:
    out = Expression("call", "or", [_expr(predicate0), _expr(predicate1)])
    for p in predicates:
        out = Expression("call", "or", [out, _expr(p)])
    return out


def not_(expression: Any) -> Expression:
    return Expression("call", "not", [_expr(expression)])


def if_then_else(condition: Any, if_true: Any, if_false: Any) -> Expression:
    return Expression("call", "if", [_expr(condition), _expr(if_true), _expr(if_false)])


def coalesce(*args: Any) -> Expression:
    return Expression("call", "coalesce", [_expr(a) for a in args])


def concat(first: Any, *others: Any) -> Expression:
    return Expression("call", "concat", [_expr(first), *(_expr(o) for o in others)])


def concat_ws(separator: Any, first: Any, *others: Any) -> Expression:
    return Expression("call", "concat_ws", [_expr(separator), _expr(first), *(_expr(o) for o in others)])


def negative(v: Any) -> Expression:
    return Expression("call", "minusPrefix", [_expr(v)])


def null_of(data_type: Any) -> Expression:
    return Expression("cast", None, [Expression("lit", None)], data_type=data_type)


def with_all_columns() -> Expression:
    return Expression("star")


def call(f: Any, *args: Any) -> Expression:
    """A call of a function by name (a registered or built-in function) or of a UDF object."""
    return Expression("call", f, [_expr(a) for a in args])
