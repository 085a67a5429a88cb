"""``Expression``: the unresolved expression tree the Table API's DSL builds.

``col('a') + 1`` builds ``Expression('call', 'plus', [col a, lit 1])``; nothing is checked until a
Table method resolves it against its input's columns (flott.table.planner.resolve), where unknown
columns and bad types raise Flink's ValidationException messages. Function names are Flink's
BuiltInFunctionDefinitions names; properties and methods are PyFlink's (``.sum`` is a property,
``.substring(1, 2)`` a method).
"""

from __future__ import annotations

from typing import Any

__all__ = ["Expression", "TimeIntervalUnit", "TimePointUnit"]


class TimeIntervalUnit:
    """Placeholder for PyFlink's enum of interval units (extract/floor/ceil are not yet planned)."""


class TimePointUnit:
    """Placeholder for PyFlink's enum of time point units."""


def _expr(v: Any) -> Expression:
    if isinstance(v, Expression):
        return v
    return Expression("lit", v)


def _bin(name: str, reverse: bool = False) -> Any:
    def op(self: Expression, other: Any) -> Expression:
        a, b = (self, _expr(other))
        if reverse:
            a, b = b, a
        return Expression("call", name, [a, b])

    return op


def _un(name: str) -> Any:
    def op(self: Expression) -> Expression:
        return Expression("call", name, [self])

    return op


def _prop(name: str) -> Any:
    return property(_un(name))


def _method(name: str) -> Any:
    def op(self: Expression, *args: Any) -> Expression:
        return Expression("call", name, [self, *(_expr(a) for a in args)])

    return op


class Expression:
    """One node: ``kind`` is ``col`` (value = name), ``lit`` (value, data_type), ``call`` (value =
    function name, args), ``alias`` (args[0], names), ``cast`` (args[0], data_type), ``star``, ``over``."""

    __hash__ = None  # type: ignore[assignment]  # == builds an expression, as in PyFlink

    def __init__(
        self,
        kind: str,
        value: Any = None,
        args: list[Expression] | None = None,
        data_type: Any = None,
        names: list[str] | None = None,
    ) -> None:
        self.kind = kind
        self.value = value
        self.args = args or []
        self.data_type = data_type
        self.names = names or []

    # comparison
    __eq__ = _bin("equals")  # type: ignore[assignment]
    __ne__ = _bin("notEquals")  # type: ignore[assignment]
    __lt__ = _bin("lessThan")
    __gt__ = _bin("greaterThan")
    __le__ = _bin("lessThanOrEqual")
    __ge__ = _bin("greaterThanOrEqual")
    # logic
    __and__ = _bin("and")
    __or__ = _bin("or")
    __rand__ = _bin("and", True)
    __ror__ = _bin("or", True)
    __invert__ = _un("isNotTrue")
    # arithmetic
    __add__ = _bin("plus")
    __sub__ = _bin("minus")
    __mul__ = _bin("times")
    __truediv__ = _bin("divide")
    __mod__ = _bin("mod")
    __pow__ = _bin("power")
    __radd__ = _bin("plus", True)
    __rsub__ = _bin("minus", True)
    __rmul__ = _bin("times", True)
    __rtruediv__ = _bin("divide", True)
    __rmod__ = _bin("mod", True)
    __rpow__ = _bin("power", True)
    __neg__ = _un("minusPrefix")
    __abs__ = _un("abs")

    def __bool__(self) -> bool:
        raise TypeError("an Expression has no truth value: combine predicates with & | ~ or and_/or_/not_")

    def __str__(self) -> str:
        if self.kind == "col":
            return str(self.value)
        if self.kind == "lit":
            return repr(self.value) if isinstance(self.value, str) else str(self.value)
        if self.kind == "alias":
            return f"as({self.args[0]}, {', '.join(repr(n) for n in self.names)})"
        if self.kind == "cast":
            return f"cast({self.args[0]}, {self.data_type})"
        if self.kind == "star":
            return "*"
        return f"{self.value}({', '.join(str(a) for a in self.args)})"

    def __repr__(self) -> str:
        return f"Expression<{self}>"

    # arithmetic functions
    exp = _prop("exp")
    log10 = _prop("log10")
    log2 = _prop("log2")
    ln = _prop("ln")
    sqrt = _prop("sqrt")
    abs = _prop("abs")
    sign = _prop("sign")

    def round(self, places: Any) -> Expression:
        return Expression("call", "round", [self, _expr(places)])

    def between(self, lower_bound: Any, upper_bound: Any) -> Expression:
        return Expression("call", "between", [self, _expr(lower_bound), _expr(upper_bound)])

    def not_between(self, lower_bound: Any, upper_bound: Any) -> Expression:
        return Expression("call", "notBetween", [self, _expr(lower_bound), _expr(upper_bound)])

    def then(self, if_true: Any, if_false: Any) -> Expression:
        return Expression("call", "if", [self, _expr(if_true), _expr(if_false)])

    def if_null(self, null_replacement: Any) -> Expression:
        return Expression("call", "coalesce", [self, _expr(null_replacement)])

    is_null = _prop("isNull")
    is_not_null = _prop("isNotNull")
    is_true = _prop("isTrue")
    is_false = _prop("isFalse")
    is_not_true = _prop("isNotTrue")
    is_not_false = _prop("isNotFalse")

    # aggregates
    distinct = _prop("distinct")
    sum = _prop("sum")
    sum0 = _prop("sum0")
    min = _prop("min")
    max = _prop("max")
    count = _prop("count")
    avg = _prop("avg")

    def alias(self, name: str, *extra_names: str) -> Expression:
        return Expression("alias", None, [self], names=[name, *extra_names])

    def cast(self, data_type: Any) -> Expression:
        return Expression("cast", None, [self], data_type=data_type)

    def try_cast(self, data_type: Any) -> Expression:
        return Expression("cast", "try", [self], data_type=data_type)

    @property
    def asc(self) -> Expression:
        return Expression("call", "asc", [self])

    @property
    def desc(self) -> Expression:
        return Expression("call", "desc", [self])

    def in_(self, first_element_or_table: Any, *remaining_elements: Any) -> Expression:
        return Expression(
            "call", "in", [self, _expr(first_element_or_table), *(_expr(e) for e in remaining_elements)]
        )

    @property
    def start(self) -> Expression:
        return Expression("call", "start", [self])

    @property
    def end(self) -> Expression:
        return Expression("call", "end", [self])

    # string functions
    def substring(self, begin_index: Any, length: Any = None) -> Expression:
        args = [self, _expr(begin_index)] + ([] if length is None else [_expr(length)])
        return Expression("call", "substring", args)

    def substr(self, begin_index: Any, length: Any = None) -> Expression:
        return self.substring(begin_index, length)

    def trim(self, character: Any = None) -> Expression:
        args = [self] + ([] if character is None else [_expr(character)])
        return Expression("call", "trim", args)

    def trim_leading(self, character: Any = None) -> Expression:
        args = [self] + ([] if character is None else [_expr(character)])
        return Expression("call", "ltrim", args)

    def trim_trailing(self, character: Any = None) -> Expression:
        args = [self] + ([] if character is None else [_expr(character)])
        return Expression("call", "rtrim", args)

    replace = _method("replace")
    char_length = _prop("charLength")
    upper_case = _prop("upper")
    lower_case = _prop("lower")
    init_cap = _prop("initCap")
    like = _method("like")
    position = _method("position")
    starts_with = _method("startsWith")
    ends_with = _method("endsWith")
    concat = _method("concat")
    reverse = _prop("reverse")

    def lpad(self, length: Any, pad: Any) -> Expression:
        return Expression("call", "lpad", [self, _expr(length), _expr(pad)])

    def rpad(self, length: Any, pad: Any) -> Expression:
        return Expression("call", "rpad", [self, _expr(length), _expr(pad)])

    def repeat(self, n: Any) -> Expression:
        return Expression("call", "repeat", [self, _expr(n)])

    # time attributes
    @property
    def rowtime(self) -> Expression:
        return Expression("call", "rowtime", [self])

    @property
    def proctime(self) -> Expression:
        return Expression("call", "proctime", [self])

    # interval literals: lit(5).seconds
    def _interval(self, millis: int) -> Expression:
        return Expression("interval", millis, [self])

    @property
    def milli(self) -> Expression:
        return self._interval(1)

    millis = milli

    @property
    def second(self) -> Expression:
        return self._interval(1000)

    seconds = second

    @property
    def minute(self) -> Expression:
        return self._interval(60_000)

    minutes = minute

    @property
    def hour(self) -> Expression:
        return self._interval(3_600_000)

    hours = hour

    @property
    def day(self) -> Expression:
        return self._interval(86_400_000)

    days = day

    def get(self, name_or_index: Any) -> Expression:
        return Expression("call", "get", [self, _expr(name_or_index)])

    def at(self, index: Any) -> Expression:
        return Expression("call", "at", [self, _expr(index)])

    def __getitem__(self, index: Any) -> Expression:
        return self.at(index)

    def over(self, alias: Any) -> Expression:
        return Expression("call", "over", [self, _expr(alias)])
