"""Resolved expressions (``Rex``): names bound to input columns, types derived, code generated.

Both front ends end here: the Table API resolves its :class:`Expression` trees, the SQL front end
(flott.table.sql) builds the same calls from sqlglot's AST. Types follow Flink's rules where the
printed result depends on them (``BIGINT / INT`` is an integral division, ``MOD`` takes its second
operand's type, ``AVG`` of an integral column is integral, ``CHAR_LENGTH`` is ``INT``). A call this
planner does not know is refused (NotYetSupportedError naming it) rather than guessed at.
"""

from __future__ import annotations

import datetime as _dt
import decimal
from dataclasses import dataclass, field
from typing import Any

from flott.errors import NotYetSupportedError, TableError, TableValidationError
from flott.table import time_functions
from flott.table.expression import Expression
from flott.table.types import (
    BigIntType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    RowType,
    TimestampType,
    TimeType,
    VarCharType,
)

VALIDATION = "org.apache.flink.table.api.ValidationException: "
TABLE_EXCEPTION = "org.apache.flink.table.api.TableException: "

AGGREGATES = frozenset({"count", "sum", "sum0", "min", "max", "avg"})


def validation_error(message: str) -> TableValidationError:
    return TableValidationError(VALIDATION + message)


def table_error(message: str) -> TableError:
    """Flink's TableException: a program Flink's planner cannot plan (PyFlink prints the Java name)."""
    return TableError(TABLE_EXCEPTION + message)


@dataclass
class Rex:
    kind: str  # input | lit | call | cast | agg | udf
    type: DataType
    index: int = -1
    value: Any = None
    operands: list[Rex] = field(default_factory=list)
    distinct: bool = False

    def key(self) -> str:
        """A structural identity (to match GROUP BY expressions in the select list)."""
        if self.kind == "input":
            return f"${self.index}"
        if self.kind == "lit":
            return f"lit({self.value!r})"
        inner = ",".join(o.key() for o in self.operands)
        fn = self.value if isinstance(self.value, str) else id(self.value)
        return f"{self.kind}:{fn}:{self.type}({inner})"


_INTEGRAL = {"TINYINT": 0, "SMALLINT": 1, "INTEGER": 2, "BIGINT": 3}
_STRINGS = {"CHAR", "VARCHAR"}


def _is_integral(t: DataType) -> bool:
    return t.type_root in _INTEGRAL


def _is_numeric(t: DataType) -> bool:
    return t.type_root in _INTEGRAL or t.type_root in ("DECIMAL", "FLOAT", "DOUBLE")


def _decimal_of(t: DataType) -> DecimalType:
    if isinstance(t, DecimalType):
        return t
    return DecimalType({"TINYINT": 3, "SMALLINT": 5, "INTEGER": 10, "BIGINT": 19}[t.type_root], 0)


def _nullable(*ts: DataType) -> bool:
    return any(t.is_nullable for t in ts)


def _adjusted_decimal(p: int, s: int, nullable: bool) -> DecimalType:
    """Flink's (SQL Server's) rule when a decimal result needs more than 38 digits: keep the
    integral digits, give up scale down to 6."""
    if p > 38:
        s = max(38 - (p - s), min(s, 6))
        p = 38
    return DecimalType(p, s, nullable)


def numeric_common(a: DataType, b: DataType, op: str = "plus") -> DataType:
    nullable = _nullable(a, b)
    if not (_is_numeric(a) and _is_numeric(b)):
        if a.type_root == "NULL":
            return b.with_nullability(True)
        if b.type_root == "NULL":
            return a.with_nullability(True)
        raise validation_error(f"Invalid arithmetic on {a} and {b}")
    roots = {a.type_root, b.type_root}
    if "DOUBLE" in roots:
        return DoubleType(nullable)
    if "FLOAT" in roots:
        return FloatType(nullable)
    if "DECIMAL" in roots:
        da, db = _decimal_of(a), _decimal_of(b)
        if op == "times":
            p, s = da.precision + db.precision + 1, da.scale + db.scale
        elif op == "divide":
            s = max(6, da.scale + db.precision + 1)
            p = da.precision - da.scale + db.scale + s
        else:
            s = max(da.scale, db.scale)
            p = max(da.precision - da.scale, db.precision - db.scale) + s + 1
        return _adjusted_decimal(p, s, nullable)
    wider = a if _INTEGRAL[a.type_root] >= _INTEGRAL[b.type_root] else b
    return wider.with_nullability(nullable)


def common_type(types: list[DataType]) -> DataType:
    known = [t for t in types if t.type_root != "NULL"]
    if not known:
        return types[0]
    nullable = _nullable(*types)
    first = known[0]
    if all(t.type_root in _STRINGS for t in known):
        if all(t.type_root == "CHAR" for t in known):
            return CharType(max(t.length for t in known), nullable)  # type: ignore[attr-defined]
        return VarCharType(max(t.length for t in known), nullable)  # type: ignore[attr-defined]
    if all(_is_numeric(t) for t in known):
        out = first
        for t in known[1:]:
            out = numeric_common(out, t)
        return out.with_nullability(nullable)
    for t in known[1:]:
        if t.type_root != first.type_root:
            raise validation_error(f"Cannot find a common type of {first} and {t}")
    return first.with_nullability(nullable)


def literal_type(v: Any) -> DataType:
    if v is None:
        t = DataType()
        t._name = "NULL"
        t.type_root = "NULL"
        return t
    if isinstance(v, bool):
        return BooleanType(False)
    if isinstance(v, int):
        return IntType(False) if -(2**31) <= v < 2**31 else BigIntType(False)
    if isinstance(v, float):
        return DoubleType(False)
    if isinstance(v, str):
        return CharType(len(v), False)
    if isinstance(v, decimal.Decimal):
        _, digits, exp = v.as_tuple()
        scale = max(-int(exp), 0)
        return DecimalType(max(len(digits), scale, 1), scale, False)
    if isinstance(v, _dt.datetime):
        return TimestampType(6, False)
    if isinstance(v, _dt.date):
        return DateType(False)
    if isinstance(v, _dt.time):
        return TimeType(0, False)
    if isinstance(v, _dt.timedelta):
        return DayTimeIntervalType("SECOND", False)
    raise NotYetSupportedError(f"literals of type {type(v).__name__} are not yet supported")


_STRING = VarCharType(VarCharType.MAX_LENGTH)

# function name -> (helper name in flott.table.runtime, result type rule)
_SIMPLE: dict[str, str] = {
    "plus": "n_plus",
    "minus": "n_minus",
    "times": "n_times",
    "mod": "n_mod",
    "power": "n_power",
    "minusPrefix": "n_neg",
    "abs": "n_abs",
    "equals": "n_eq",
    "notEquals": "n_ne",
    "lessThan": "n_lt",
    "greaterThan": "n_gt",
    "lessThanOrEqual": "n_le",
    "greaterThanOrEqual": "n_ge",
    "and": "n_and",
    "or": "n_or",
    "not": "n_not",
    "between": "n_between",
    "in": "n_in",
    "upper": "n_upper",
    "lower": "n_lower",
    "initCap": "n_init_cap",
    "charLength": "n_char_length",
    "cardinality": "n_cardinality",
    "substring": "n_substring",
    "concat": "n_concat",
    "concat_ws": "n_concat_ws",
    "trim": "n_trim",
    "ltrim": "n_ltrim",
    "rtrim": "n_rtrim",
    "replace": "n_replace",
    "reverse": "n_reverse",
    "repeat": "n_repeat",
    "position": "n_position",
    "startsWith": "n_starts_with",
    "endsWith": "n_ends_with",
    "lpad": "n_lpad",
    "rpad": "n_rpad",
    "like": "n_like",
    "coalesce": "n_coalesce",
    "round": "n_round",
    "sqrt": "n_sqrt",
    "exp": "n_exp",
    "ln": "n_ln",
    "log10": "n_log10",
    "log2": "n_log2",
    "sign": "n_sign",
    "isTrue": "n_is_true",
    "isFalse": "n_is_false",
    "floor": "n_floor",
    "ceil": "n_ceil",
    "nullif": "n_nullif",
    "toTimestampLtz": "n_to_timestamp_ltz",
    **time_functions.HELPER_OF,
}

_BOOLEAN_RESULT = {
    "equals",
    "notEquals",
    "lessThan",
    "greaterThan",
    "lessThanOrEqual",
    "greaterThanOrEqual",
    "and",
    "or",
    "not",
    "between",
    "in",
    "like",
    "startsWith",
    "endsWith",
}
_STRING_RESULT = {
    "upper",
    "lower",
    "initCap",
    "substring",
    "concat",
    "concat_ws",
    "trim",
    "ltrim",
    "rtrim",
    "replace",
    "reverse",
    "repeat",
    "lpad",
    "rpad",
}
_DOUBLE_RESULT = {"power", "sqrt", "exp", "ln", "log10", "log2"}


_DATETIME = (
    "DATE",
    "TIME_WITHOUT_TIME_ZONE",
    "TIMESTAMP_WITHOUT_TIME_ZONE",
    "TIMESTAMP_WITH_LOCAL_TIME_ZONE",
)


def call_type(name: str, operands: list[Rex]) -> DataType:
    ts = [o.type for o in operands]
    nullable = _nullable(*ts)
    roots = [t.type_root for t in ts]
    if name in ("plus", "minus") and "INTERVAL_DAY_TIME" in roots:
        if roots == ["INTERVAL_DAY_TIME", "INTERVAL_DAY_TIME"]:
            return ts[0].with_nullability(nullable)
        moment = [t for t in ts if t.type_root in _DATETIME]
        if len(moment) != 1 or (name == "minus" and roots[0] == "INTERVAL_DAY_TIME"):
            raise validation_error(f"Cannot apply '{name}' to arguments of type {ts[0]} and {ts[1]}")
        return moment[0].with_nullability(nullable)
    if name in time_functions.TIME_FUNCTIONS:
        moments = {"extract": [1], "dateFormat": [0], "timestampDiff": [1, 2], "floorTo": [0], "ceilTo": [0]}
        for i in moments.get(name, []):
            text_ok = name == "dateFormat" and ts[i].type_root in _STRINGS
            if ts[i].type_root not in _DATETIME and not text_ok:
                raise validation_error(f"Cannot apply '{name}' to an argument of type {ts[i]}")
        return time_functions.result_type(name, ts)
    if name == "toTimestampLtz":
        if not _is_numeric(ts[0]):
            raise validation_error(f"TO_TIMESTAMP_LTZ needs a numeric epoch value, got {ts[0]}")
        return LocalZonedTimestampType(3, ts[0].is_nullable)
    if name in ("plus", "minus", "times"):
        if name == "plus" and any(t.type_root in _STRINGS for t in ts):
            raise validation_error(f"Invalid function call:\nplus({', '.join(str(t) for t in ts)})")
        return numeric_common(ts[0], ts[1], name)
    if name == "divide":
        if _is_integral(ts[0]) and _is_integral(ts[1]):
            return numeric_common(ts[0], ts[1])
        return numeric_common(ts[0], ts[1], "divide")
    if name == "mod":
        return ts[1].with_nullability(nullable)
    if name in ("minusPrefix", "abs", "round", "sign", "floor", "ceil"):
        return ts[0]
    if name == "nullif":
        return ts[0].with_nullability(True)
    if name in _BOOLEAN_RESULT:
        return BooleanType(nullable)
    if name in ("isNull", "isNotNull", "isTrue", "isFalse", "isNotTrue", "isNotFalse"):
        return BooleanType(False)
    if name in ("upper", "lower", "initCap") and ts and ts[0].type_root in _STRINGS:
        return ts[0].with_nullability(nullable)  # Calcite's ARG0_NULLABLE: VARCHAR(2) stays VARCHAR(2)
    if name in _STRING_RESULT:
        return VarCharType(VarCharType.MAX_LENGTH, nullable)
    if name in ("charLength", "position"):
        return IntType(nullable)
    if name == "cardinality":
        if roots[0] not in ("ARRAY", "MAP", "MULTISET"):
            raise validation_error(
                f"SQL validation failed. Cannot apply 'CARDINALITY' to arguments of type "
                f"'CARDINALITY(<{ts[0].nullable()}>)'"
            )
        return IntType(nullable)
    if name in _DOUBLE_RESULT:
        return DoubleType(nullable)
    if name == "coalesce":
        out = common_type(ts)
        return out.with_nullability(all(t.is_nullable for t in ts))
    if name == "if":
        return common_type(ts[1:])
    if name == "case":
        results = ts[1::2] + ([ts[-1]] if len(ts) % 2 else [])
        out = common_type(results)
        return out if len(ts) % 2 else out.with_nullability(True)
    raise NotYetSupportedError(f"the function '{name}' is not yet supported by flott's Table API/SQL")


def aggregate_type(name: str, arg: DataType | None) -> DataType:
    if name == "count":
        return BigIntType(False)
    assert arg is not None
    if name in ("sum", "sum0"):
        if not _is_numeric(arg):
            raise validation_error(f"SUM requires a numeric argument, got {arg}")
        if isinstance(arg, DecimalType):
            return DecimalType(38, arg.scale)
        return arg.with_nullability(name == "sum")
    if name == "avg":
        if not _is_numeric(arg):
            raise validation_error(f"AVG requires a numeric argument, got {arg}")
        if isinstance(arg, DecimalType):
            return DecimalType(38, max(arg.scale, 6))
        return arg.with_nullability(True)
    return arg.with_nullability(True)  # min, max


class Resolver:
    """Binds a Table API expression to input columns (and registered functions)."""

    def __init__(
        self,
        names: list[str],
        types: list[DataType],
        functions: dict[str, Any] | None = None,
        allow_aggregates: bool = False,
    ) -> None:
        self.names, self.types = names, types
        self.functions = functions or {}
        self.allow_aggregates = allow_aggregates

    def field(self, name: str) -> Rex:
        if name not in self.names:
            raise validation_error(
                f"Cannot resolve field [{name}], input field list:[{', '.join(self.names)}]."
            )
        i = self.names.index(name)
        return Rex("input", self.types[i], index=i)

    def resolve(self, e: Expression) -> Rex:
        if not isinstance(e, Expression):
            e = Expression("lit", e)
        if e.kind == "col":
            return self.field(e.value)
        if e.kind == "lit":
            return Rex("lit", literal_type(e.value), value=e.value)
        if e.kind == "alias":
            return self.resolve(e.args[0])
        if e.kind == "cast":
            inner = self.resolve(e.args[0])
            nullable = inner.type.is_nullable or e.data_type.is_nullable or e.value == "try"
            return Rex("cast", e.data_type.with_nullability(nullable), value=e.value, operands=[inner])
        if e.kind != "call":
            raise NotYetSupportedError(f"the expression '{e}' is not yet supported by flott's Table API")
        name = e.value
        if not isinstance(name, str):
            return self.udf_call(name, [self.resolve(a) for a in e.args])
        if name == "distinct" and e.args and e.args[0].kind == "call" and e.args[0].value in AGGREGATES:
            agg = self.resolve(e.args[0])
            agg.distinct = True
            return agg
        if name in AGGREGATES:
            return self.aggregate(name, [self.resolve(a) for a in e.args])
        if name in self.functions:
            return self.udf_call(self.functions[name], [self.resolve(a) for a in e.args])
        if name == "get" and len(e.args) == 2 and e.args[1].kind == "lit":
            row = self.resolve(e.args[0])
            key = e.args[1].value
            found = field_index(row.type, key)
            if found is None:
                raise validation_error(f"Invalid function call:\nget({row.type}, {literal_type(key)})")
            return field_access(row, found)
        operands = [self.resolve(a) for a in e.args]
        return make_call(name, operands)

    def aggregate(self, name: str, operands: list[Rex]) -> Rex:
        if not self.allow_aggregates:
            raise validation_error(
                "Aggregate functions are not supported here: use group_by(...).select(...) or an "
                "aggregation in SQL"
            )
        arg = operands[0] if operands else None
        return Rex("agg", aggregate_type(name, arg.type if arg else None), value=name, operands=operands)

    def udf_call(self, fn: Any, operands: list[Rex]) -> Rex:
        from flott.table.udf import UserDefinedFunctionWrapper

        if isinstance(fn, UserDefinedFunctionWrapper):
            if fn.kind == "aggregate":
                if not self.allow_aggregates:
                    raise validation_error("Aggregate functions are not supported here")
                return Rex("agg", fn.result_type, value=fn, operands=operands)
            if fn.kind == "table":
                raise validation_error(
                    "a table function (@udtf) cannot be called as a scalar expression: use join_lateral, "
                    "left_outer_join_lateral, flat_map or SQL's LATERAL TABLE(...)"
                )
            if fn.kind != "scalar":
                raise NotYetSupportedError(f"{fn.kind} functions are not yet supported in this position")
            return Rex("udf", fn.result_type, value=fn, operands=operands)
        raise NotYetSupportedError(
            f"call() of {fn!r} is not yet supported: register it with "
            "create_temporary_function or pass a @udf"
        )


def field_index(row_type: DataType, key: str | int) -> int | None:
    """The index of a ROW's field named ``key`` (or at index ``key``), None if it has none."""
    if not isinstance(row_type, RowType):
        return None
    names = row_type.field_names()
    if isinstance(key, str):
        return names.index(key) if key in names else None
    return key if isinstance(key, int) and 0 <= key < len(names) else None


def field_access(row: Rex, index: int) -> Rex:
    """``p.name`` / ``col("p").get("name")``: nullable when the row or the field is."""
    assert isinstance(row.type, RowType)
    t = row.type.field_types()[index]
    return Rex("call", t.with_nullability(t.is_nullable or row.type.is_nullable), value="get",
               operands=[row, Rex("lit", IntType(False), value=index)])


def make_call(name: str, operands: list[Rex]) -> Rex:
    if name == "isNotTrue":
        return Rex("call", BooleanType(False), value="isNotTrue", operands=operands)
    if name in ("isNull", "isNotNull", "isNotFalse"):
        return Rex("call", BooleanType(False), value=name, operands=operands)
    if name == "notBetween":
        return make_call("not", [make_call("between", operands)])
    if name not in _SIMPLE and name not in ("divide", "if", "case"):
        raise NotYetSupportedError(f"the function '{name}' is not yet supported by flott's Table API/SQL")
    return Rex("call", call_type(name, operands), value=name, operands=operands)


# --------------------------------------------------------------------------- casts


class Caster:
    """CAST(v AS target) for one source type; picklable (it travels as a constant of the calc)."""

    def __init__(self, source: DataType, target: DataType) -> None:
        self.source, self.target = source, target

    def __call__(self, v: Any) -> Any:
        s, t = self.source, self.target
        root = t.type_root
        if root in _STRINGS:
            if isinstance(v, bytes | bytearray):  # Flink decodes the bytes as UTF-8
                text = bytes(v).decode("utf-8", errors="replace")
            else:
                text = v if isinstance(v, str) else s.format_sql(v)
            if root == "CHAR":
                return text[: t.length].ljust(t.length)  # type: ignore[attr-defined]
            return text
        if root in _INTEGRAL:
            if isinstance(v, str):
                return int(v.strip())
            if isinstance(v, bool):
                return int(v)
            return int(v)
        if root in ("DOUBLE", "FLOAT"):
            return float(v)
        if root == "DECIMAL":
            scale = t.scale if isinstance(t, DecimalType) else 0
            return decimal.Decimal(str(v).strip() if isinstance(v, str) else v).quantize(
                decimal.Decimal(1).scaleb(-scale)
            )
        if root == "BOOLEAN":
            if isinstance(v, str):
                return v.strip().lower() in ("true", "t", "yes", "y", "1")
            return bool(v)
        if root == "DATE":
            return _dt.date.fromisoformat(v.strip()) if isinstance(v, str) else v
        if root == "TIMESTAMP_WITHOUT_TIME_ZONE":
            return _dt.datetime.fromisoformat(v.strip()) if isinstance(v, str) else v
        if root in ("BINARY", "VARBINARY") and isinstance(v, str | bytes | bytearray):
            data = v.encode("utf-8") if isinstance(v, str) else bytes(v)
            length = t.length  # type: ignore[attr-defined]
            if root == "BINARY":  # fixed length: cut or padded with zero bytes, as Flink does
                return data[:length].ljust(length, b"\x00")
            return data[:length]
        raise NotYetSupportedError(f"CAST to {t} is not yet supported")


# --------------------------------------------------------------------------- code generation


def to_python(rex: Rex, consts: list[Any], udfs: list[Any]) -> str:
    """Python source of the expression over the row tuple ``v``; constants go to ``K``, UDFs to
    ``U`` (both lists travel with the compiled code)."""
    k = rex.kind
    if k == "input":
        return f"v[{rex.index}]"
    if k == "lit":
        consts.append(rex.value)
        return f"K[{len(consts) - 1}]"
    if k == "cast":
        inner = rex.operands[0]
        if str(inner.type.with_nullability(True)) == str(rex.type.with_nullability(True)):
            return to_python(inner, consts, udfs)
        consts.append(Caster(inner.type, rex.type))
        index = len(consts) - 1  # before the operand adds constants of its own
        helper = "n_try_cast" if rex.value == "try" else "n_cast"
        return f"{helper}({to_python(inner, consts, udfs)}, K[{index}])"
    if k == "udf":
        if getattr(rex.value, "func_type", "general") == "pandas":
            # a Calc plans its pandas calls as batch operators (pandas_calc); elsewhere (join
            # conditions, VALUES, table function arguments ...) there is no batch to give them
            raise NotYetSupportedError(
                "vectorized (func_type='pandas') scalar UDFs are supported by flott in projections "
                "and filters (select, where, add_columns, SQL SELECT/WHERE), not yet in this position"
            )
        consts.append(rex.value.evaluator())
        index = len(consts) - 1  # before the operands add constants of their own (literals)
        call_args = ", ".join(to_python(o, consts, udfs) for o in rex.operands)
        return f"K[{index}]({call_args})"
    if k == "agg":
        raise validation_error("Aggregate functions are not supported in this position")
    name = rex.value
    if name == "get":  # a ROW's field, by the index the planner resolved
        return f"n_get({to_python(rex.operands[0], consts, udfs)}, {rex.operands[1].value})"
    args = _coerced(rex, [to_python(o, consts, udfs) for o in rex.operands])
    if name == "isNull":
        return f"({args[0]} is None)"
    if name == "isNotNull":
        return f"({args[0]} is not None)"
    if name == "isNotTrue":
        return f"({args[0]} is not True)"
    if name == "isNotFalse":
        return f"({args[0]} is not False)"
    if name == "divide":
        fn = "n_divide_int" if rex.type.type_root in _INTEGRAL else "n_divide"
        if rex.type.type_root in ("DOUBLE", "FLOAT") and all(_is_integral(o.type) for o in rex.operands):
            fn = "n_divide"
        return f"{fn}({args[0]}, {args[1]})"
    if name == "if":
        return f"({args[1]} if {args[0]} is True else {args[2]})"
    if name == "case":
        out = args[-1] if len(args) % 2 else "None"
        for i in range(len(args) - (2 if len(args) % 2 == 0 else 3), -1, -2):
            out = f"({args[i + 1]} if {args[i]} is True else {out})"
        return out
    return f"{_SIMPLE[name]}({', '.join(args)})"


def _coerced(rex: Rex, args: list[str]) -> list[str]:
    """Python cannot mix Decimal and float: where DOUBLE meets DECIMAL, the DECIMAL side becomes float."""
    types = [o.type.type_root for o in rex.operands]
    if "DECIMAL" in types and ({"DOUBLE", "FLOAT"} & set(types)):
        return [f"n_cast({a}, float)" if t == "DECIMAL" else a for a, t in zip(args, types, strict=True)]
    return args


def calc_source(projections: list[Rex], condition: Rex | None, consts: list[Any], udfs: list[Any]) -> str:
    """``def calc(v)``: the projected tuple, or None when the condition is not TRUE."""
    lines = ["def calc(v):"]
    if condition is not None:
        lines.append(f"    if {to_python(condition, consts, udfs)} is not True:")
        lines.append("        return None")
    body = ", ".join(to_python(p, consts, udfs) for p in projections)
    lines.append(f"    return ({body}{',' if len(projections) == 1 else ''})")
    return "\n".join(lines) + "\n"
