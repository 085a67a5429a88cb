"""Converting Python values to a declared type, as PyFlink's trip through Java does.

In PyFlink, ``env.from_collection(elements, type_info=...)`` pickles the
elements, Java unpickles them, converts each to the declared Java type
(``PythonTypeUtils``' converters) and serialises it; Python functions
downstream then receive the value decoded back from Java. What a user's
function sees is therefore not the element as written but its round trip:

- ``Types.ROW``/``ROW_NAMED``: a :class:`Row` (field access ``row.name``) built from
  a tuple, list, dict, Row or object; a field that does not fit its type becomes
  ``None`` (Java's converters yield ``null`` and rows are nullable);
- ``Types.TUPLE``: a tuple; its fields must fit (Java tuples hold no ``null``);
- ``Types.FLOAT``: the float rounded through 32 bits; ``BYTE``/``SHORT``/``INT``
  wrap to their width; ``STRING`` takes anything but ``None`` as Java's
  ``toString`` renders it (``1`` → ``'1'``, ``True`` → ``'true'``);
- ``Types.MAP``: a dict in ``java.util.HashMap`` iteration order;
- ``SQL_TIME``/``SQL_TIMESTAMP``/``INSTANT``: truncated to milliseconds.

Elements that do not fit are rejected when ``from_collection`` is called, the
point where PyFlink fails (there with a Java exception; here with one line
saying which element and why). Where PyFlink fails only because its bridge
cannot carry a type at all (``Types.LIST``, ``CHAR``, ``PICKLED_BYTE_ARRAY``,
``BIG_INT`` below 2**63, ``bytes`` for a byte array), flott converts the value
the way the declared type means instead of refusing a well-formed program.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from flott.common.java_text import java_double_to_string, java_hashmap_order, to_float32
from flott.common.types import Row, RowKind
from flott.errors import InvalidProgramError, UserCodeError

__all__ = [
    "DeclaredKeySelector",
    "OutputTypeMismatch",
    "collection_converter",
    "convert_collection",
    "java_serializer_takes_null",
    "output_converter",
    "output_type_check",
    "output_type_check_lazy",
    "output_value_fix",
    "with_declared_key_type",
]

Converter = Callable[[Any], Any]


class _NullResult(Exception):
    """The value does not fit and Java's converter yields ``null`` for it (a Row field takes that)."""


class _Rejected(Exception):
    """The value does not fit and the conversion fails outright (even inside a Row)."""


_INT_BITS = {"Byte": 8, "Short": 16, "Integer": 32, "Long": 64}
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def _python_type(v: Any) -> str:
    return type(v).__name__


def _wrap(bits: int) -> Converter:
    mask = (1 << bits) - 1
    sign = 1 << (bits - 1)

    def conv(v: Any) -> int:
        if v.__class__ is not int:
            if not isinstance(v, int) or isinstance(v, bool):
                raise _NullResult(f"needs an int, got {_python_type(v)}")
        if not _LONG_MIN <= v <= _LONG_MAX:
            raise _NullResult("the int is out of the 64-bit range")
        if bits == 64:
            return int(v)
        u = int(v) & mask
        return u - (1 << bits) if u & sign else u

    return conv


def _boolean(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    raise _NullResult(f"needs a bool, got {_python_type(v)}")


def _float32(v: Any) -> float:
    if isinstance(v, float):
        return to_float32(v)
    raise _NullResult(f"needs a float, got {_python_type(v)}")


def _double(v: Any) -> float:
    if isinstance(v, float):
        return float(v)
    raise _NullResult(f"needs a float, got {_python_type(v)}")


def _big_int(v: Any) -> int:
    if isinstance(v, int) and not isinstance(v, bool):
        return int(v)
    raise _Rejected(f"needs an int, got {_python_type(v)}")


def _big_dec(v: Any) -> decimal.Decimal:
    if isinstance(v, decimal.Decimal) and v.is_finite():
        return v.copy_abs() if v.is_zero() else v  # BigDecimal has no negative zero
    raise _NullResult(f"needs a finite decimal.Decimal, got {v!r}")


def _char(v: Any) -> str:
    if isinstance(v, str) and len(v) == 1:
        return v
    raise _Rejected(f"needs a one-character str, got {v!r}")


def _java_to_string(v: Any) -> str:
    """Java's ``toString`` of the object Java unpickles ``v`` into (what ``Types.STRING`` takes)."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return java_double_to_string(v)
    if isinstance(v, decimal.Decimal):
        return str(v.copy_abs() if v.is_zero() else v)
    if isinstance(v, (list, tuple)):
        return f"[Ljava.lang.Object;@{id(v) & 0x7FFFFFFF:x}"  # Java arrays print their identity
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_java_to_string(k)}={_java_to_string(x)}" for k, x in v.items()) + "}"
    return str(v)


def _string(v: Any) -> str:
    if v.__class__ is str:
        return v  # type: ignore[no-any-return]
    if v is None:
        raise _NullResult("needs a value, got None")
    return _java_to_string(v)


def _sql_date(v: Any) -> _dt.date:
    if isinstance(v, _dt.datetime):
        return v.date()
    if isinstance(v, _dt.date):
        return v
    raise _Rejected(f"needs a datetime.date, got {_python_type(v)}")


def _sql_time(v: Any) -> _dt.time:
    if isinstance(v, (_dt.time, _dt.datetime)):
        return _dt.time(v.hour, v.minute, v.second, v.microsecond // 1000 * 1000)
    raise _Rejected(f"needs a datetime.time, got {_python_type(v)}")


def _sql_timestamp(v: Any) -> _dt.datetime:
    if not isinstance(v, _dt.datetime):
        raise _Rejected(f"needs a datetime.datetime, got {_python_type(v)}")
    if v.tzinfo is not None:  # PyFlink ships the instant and reads it back as local time
        v = _dt.datetime.fromtimestamp(v.timestamp())
    return v.replace(microsecond=v.microsecond // 1000 * 1000)


def _instant(v: Any) -> Any:
    from flott.common.time import Instant

    if isinstance(v, Instant):
        return Instant.of_epoch_milli(v.to_epoch_milli())
    raise _Rejected(f"needs a flott.common.time.Instant, got {_python_type(v)}")


def _identity(v: Any) -> Any:
    return v


def _strict(conv: Converter) -> Converter:
    """``conv`` where ``null`` is not allowed (tuple fields, array elements, map entries)."""

    def strict(v: Any) -> Any:
        if v is None:
            raise _Rejected("needs a value, got None")
        try:
            return conv(v)
        except _NullResult as e:
            raise _Rejected(str(e)) from None

    return strict


def _nullable(conv: Converter) -> Converter:
    """``conv`` for a Row field: ``None`` stays, a value that does not fit becomes ``None``."""

    def nullable(v: Any) -> Any:
        if v is None:
            return None
        try:
            return conv(v)
        except _NullResult:
            return None

    return nullable


def _sequence(v: Any) -> list[Any] | tuple[Any, ...]:
    if isinstance(v, (list, tuple)):
        return v
    if isinstance(v, Row):
        return list(v)
    raise _NullResult(f"needs a list or tuple, got {_python_type(v)}")


def _array(element: Converter, *, byte_array: bool = False) -> Converter:
    strict = _strict(element)

    def conv(v: Any) -> Any:
        if not byte_array:
            return [strict(x) for x in _sequence(v)]
        if isinstance(v, (bytes, bytearray)):
            return bytes(v)
        if isinstance(v, str):
            return v.encode("utf-8")  # Java's converter takes a String as its UTF-8 bytes
        raise _NullResult(f"needs bytes or str, got {_python_type(v)}")

    return conv


def _row(ti: Any) -> Converter:
    names = ti.get_field_names()  # shared by the rows: Row never mutates its field list in place
    new_row = object.__new__
    declared_names = ti._field_names
    fields = [_nullable(collection_converter(t, nested=True)) for t in ti.get_field_types()]
    arity = len(fields)

    def values_of(v: Any) -> tuple[RowKind, list[Any]]:
        if isinstance(v, Row):
            own = v.__dict__.get("_fields")
            if own is not None and declared_names is not None:
                try:
                    return v.get_row_kind(), [v[n] for n in names]
                except (KeyError, ValueError):
                    raise _Rejected(f"row {v!r} has no field {set(names) - set(own)!r}") from None
            return v.get_row_kind(), list(v)
        if isinstance(v, (tuple, list)):
            return RowKind.INSERT, list(v)
        if isinstance(v, dict):
            return RowKind.INSERT, [v.get(n) for n in names]
        if hasattr(v, "__dict__"):
            attrs = v.__dict__
            return RowKind.INSERT, [attrs.get(n) for n in names]
        raise _Rejected(f"Unexpected tuple {v!r} with RowTypeInfo")

    def conv(v: Any) -> Row:
        kind, values = values_of(v)
        if len(values) != arity:
            raise _Rejected(f"{arity} fields are required while {len(values)} values are provided")
        # Built through the instance dict (as Row's own unpickling does): collections can be large.
        row = new_row(Row)
        d = row.__dict__
        d["_values"] = [f(x) for f, x in zip(fields, values, strict=True)]
        d["_fields"] = names
        d["_from_dict"] = False
        d["_row_kind"] = kind
        return row

    return conv


def _tuple(ti: Any) -> Converter:
    fields = [_strict(collection_converter(t, nested=True)) for t in ti.get_field_types()]
    arity = len(fields)

    def conv(v: Any) -> tuple[Any, ...]:
        if not isinstance(v, (tuple, list, Row)):
            raise _Rejected(f"Unexpected tuple {v!r} with TupleTypeInfo")
        values = list(v)
        if len(values) != arity:
            raise _Rejected(f"{arity} fields are required while {len(values)} values are provided")
        return tuple(f(x) for f, x in zip(fields, values, strict=True))

    return conv


def _map(ti: Any) -> Converter:
    from flott.common.typeinfo import map_key_hash

    key = _strict(collection_converter(ti.get_key_type(), nested=True))
    value = _strict(collection_converter(ti.get_value_type(), nested=True))
    key_hash = map_key_hash(ti.get_key_type())

    def conv(v: Any) -> dict[Any, Any]:
        if not isinstance(v, dict):
            raise _NullResult(f"needs a dict, got {_python_type(v)}")
        # Java's unpickler fills its HashMap from the end of the pickled items, so colliding
        # keys come out in reverse order: iterate the reversed items into HashMap order.
        if key_hash is None:
            return {key(k): value(x) for k, x in v.items()}
        items = [(key(k), value(x)) for k, x in reversed(v.items())]
        return dict(java_hashmap_order(items, key_hash))

    return conv


def collection_converter(type_info: Any, nested: bool = False) -> Converter:
    """The function taking an element to the value PyFlink's functions would receive for it.

    It raises ``_NullResult``/``_Rejected`` for values that do not fit; use
    :func:`convert_collection` for the user-facing error."""
    from flott.common import typeinfo as ti

    if isinstance(type_info, ti.BasicTypeInfo):
        basic = type_info.basic_type
        if basic.value in _INT_BITS:
            return _wrap(_INT_BITS[basic.value])
        simple: dict[ti.BasicType, Converter] = {
            ti.BasicType.STRING: _string,
            ti.BasicType.BOOLEAN: _boolean,
            ti.BasicType.FLOAT: _float32,
            ti.BasicType.DOUBLE: _double,
            ti.BasicType.CHAR: _char,
            ti.BasicType.BIG_INT: _big_int,
            ti.BasicType.BIG_DEC: _big_dec,
            ti.BasicType.INSTANT: _instant,
        }
        return simple[basic]
    if isinstance(type_info, ti.DateTypeInfo):
        return _sql_date
    if isinstance(type_info, ti.TimeTypeInfo):
        return _sql_time
    if isinstance(type_info, ti.TimestampTypeInfo):
        return _sql_timestamp
    if isinstance(type_info, ti.RowTypeInfo):
        return _row(type_info)
    if isinstance(type_info, ti.TupleTypeInfo):
        return _tuple(type_info)
    if isinstance(type_info, ti.MapTypeInfo):
        return _map(type_info)
    if isinstance(type_info, ti.PrimitiveArrayTypeInfo):
        element = type_info.get_element_type()
        is_bytes = isinstance(element, ti.BasicTypeInfo) and element.basic_type is ti.BasicType.BYTE
        return _array(collection_converter(element, nested=True), byte_array=is_bytes)
    if isinstance(type_info, (ti.BasicArrayTypeInfo, ti.ObjectArrayTypeInfo)):
        return _array(collection_converter(type_info.get_element_type(), nested=True))
    if isinstance(type_info, ti.ListTypeInfo):
        return _array(collection_converter(type_info.elem_type, nested=True))
    return _identity  # PICKLED_BYTE_ARRAY and types without a Java counterpart: any value


def convert_collection(elements: list[Any], type_info: Any) -> list[Any]:
    """``elements`` as the functions after ``from_collection(elements, type_info)`` see them.

    Raises InvalidProgramError naming the first element that does not fit."""
    if type_info is None:
        return elements
    conv = _strict(collection_converter(type_info))
    out = []
    for index, element in enumerate(elements):
        try:
            out.append(conv(element))
        except (_Rejected, _NullResult) as e:
            raise InvalidProgramError(
                f"from_collection(): element {index} ({element!r}) does not fit type_info {type_info!r}: {e}"
            ) from None
    return out


# --- Declared output types: what a value becomes when it leaves Python ----------------------------
#
# In PyFlink a Python operator hands its results to Java encoded with the coder of its declared
# output_type, wherever the records leave the fused Python chain: at a network edge and at a Java
# operator (every sink). Inside a chain, fused Python operators pass values on untouched. The coder
# is strict in its own way (PyFlink's Cython coders): an int field takes anything with __int__ (a
# float is truncated, a bool is 1) but overflows raise; a float field takes anything with
# __float__; a tuple must be a tuple, a basic array a list, a row a Row. What Java decodes again
# is what the next function sees: an int declared FLOAT arrives as a float rounded to 32 bits,
# a Row with the declared field names, a dict in java.util.HashMap order.


class OutputTypeMismatch(Exception):
    """A value does not fit a declared output type: the error PyFlink raises for it, and the value."""

    def __init__(self, error_type: type[Exception], detail: str) -> None:
        super().__init__(detail)
        self.error_type = error_type
        self.detail = detail
        self.value: Any = None


def _mismatch(error_type: type[Exception], detail: str) -> OutputTypeMismatch:
    return OutputTypeMismatch(error_type, detail)


def _c_integer(v: Any) -> int:
    """``v`` as the coder's C integer conversion sees it (``__int__``; a float is truncated)."""
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        if v != v:
            raise _mismatch(ValueError, "cannot convert float NaN to integer")
        if v in (math.inf, -math.inf):
            raise _mismatch(OverflowError, "cannot convert float infinity to integer")
        return int(v)
    to_int = getattr(type(v), "__int__", None)
    if to_int is None:
        raise _mismatch(TypeError, "an integer is required")
    return int(to_int(v))


_C_INT_NAMES = {8: "int8_t", 16: "int16_t", 32: "int32_t"}


def _out_int(bits: int) -> Converter:
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    too_large = f"value too large to convert to {_C_INT_NAMES.get(bits, 'C long')}"

    def conv(v: Any) -> int:
        n = v if v.__class__ is int else _c_integer(v)
        if not _LONG_MIN <= n <= _LONG_MAX:
            raise _mismatch(OverflowError, "Python int too large to convert to C long")
        if not low <= n <= high:
            raise _mismatch(OverflowError, too_large)
        return n  # type: ignore[no-any-return]

    return conv


def _out_boolean(v: Any) -> bool:
    if v.__class__ is bool:
        return v  # type: ignore[no-any-return]
    n = _c_integer(v)
    if n < 0:
        raise _mismatch(OverflowError, "can't convert negative value to unsigned char")
    if n > 255:
        raise _mismatch(OverflowError, "value too large to convert to unsigned char")
    return n != 0


def _c_double(v: Any) -> float:
    if v.__class__ is float:
        return v  # type: ignore[no-any-return]
    if not (hasattr(type(v), "__float__") or hasattr(type(v), "__index__")):
        raise _mismatch(TypeError, f"must be real number, not {_python_type(v)}")
    try:
        return float(v)
    except OverflowError:
        raise _mismatch(OverflowError, "int too large to convert to float") from None


def _out_float(v: Any) -> float:
    return to_float32(_c_double(v))


def _out_string(v: Any) -> str:
    if v.__class__ is str:
        return v  # type: ignore[no-any-return]
    if isinstance(v, str):
        return str(v)
    raise _mismatch(AttributeError, f"'{_python_type(v)}' object has no attribute 'encode'")


def _out_big_dec(v: Any) -> decimal.Decimal:
    try:
        d = decimal.Decimal(str(v))
    except decimal.InvalidOperation:
        raise _mismatch(decimal.InvalidOperation, "[<class 'decimal.ConversionSyntax'>]") from None
    if not d.is_finite():
        raise _mismatch(ValueError, f"{d} is not a value of java.math.BigDecimal")
    return d.copy_abs() if d.is_zero() else d  # BigDecimal has no negative zero


def _no_attribute(v: Any, name: str) -> OutputTypeMismatch:
    return _mismatch(AttributeError, f"'{_python_type(v)}' object has no attribute '{name}'")


def _out_sql_date(v: Any) -> _dt.date:
    if v.__class__ is _dt.date:
        return v  # type: ignore[no-any-return]
    if not hasattr(v, "toordinal"):
        raise _no_attribute(v, "toordinal")
    return _dt.date.fromordinal(v.toordinal())


def _out_sql_time(v: Any) -> _dt.time:
    for name in ("hour", "minute", "second", "microsecond"):
        if not hasattr(v, name):
            raise _no_attribute(v, name)
    return _dt.time(v.hour, v.minute, v.second, v.microsecond // 1000 * 1000)


def _out_sql_timestamp(v: Any) -> _dt.datetime:
    if not hasattr(v, "replace"):
        raise _no_attribute(v, "replace")
    if not isinstance(v, _dt.datetime):
        raise _mismatch(TypeError, "'tzinfo' is an invalid keyword argument for replace()")
    # The coder sends the wall-clock time as UTC millis and reads it back the same way.
    return v.replace(tzinfo=None, microsecond=v.microsecond // 1000 * 1000)


def _out_instant(v: Any) -> Any:
    from flott.common.time import Instant

    if isinstance(v, Instant):
        return v
    for name in ("seconds", "nanos"):
        if not hasattr(v, name):
            raise _no_attribute(v, name)
    return Instant(int(v.seconds), int(v.nanos))


def _too_few(arity: int, got: int) -> OutputTypeMismatch:
    return _mismatch(ValueError, f"{arity} fields are required while {got} values are provided")


def _out_row(ti: Any) -> Converter:
    names = ti.get_field_names()
    types = ti.get_field_types()
    fields = [output_converter(t) for t in types]
    arity = len(fields)
    new_row = object.__new__

    def conv(v: Any) -> Row:
        get_fields = getattr(v, "get_fields_by_names", None)
        if get_fields is None:
            raise _no_attribute(v, "get_fields_by_names")
        try:
            values = get_fields(names)
        except Exception as e:  # Row's own error for names it lacks
            raise _mismatch(type(e), str(e)) from None
        if len(values) < arity:
            raise _too_few(arity, len(values))
        row = new_row(Row)
        d = row.__dict__
        d["_values"] = [None if x is None else f(x) for f, x in zip(fields, values, strict=False)]
        d["_fields"] = names
        d["_from_dict"] = False
        d["_row_kind"] = v.get_row_kind()
        return row

    checks = [_canonical_expr(t, f"a{i}") for i, t in enumerate(types)]
    if not 0 < arity <= _MAX_GENERATED_FIELDS or any(c is None for c in checks):
        return conv
    # Generated fast path for Rows whose fields already fit: a Row that came out of this converter
    # (it shares the declared name list) passes as it is, any other gets the names in one copy.
    values = ", ".join(f"a{i}" for i in range(arity))
    unpack = f"{values}{',' if arity == 1 else ''} = vals[:{arity}]"
    fit = " and ".join(f"(a{i} is None or {c})" for i, c in enumerate(checks))
    source = (
        "def conv_row(v):\n"
        "    if v.__class__ is ROW:\n"
        "        d = v.__dict__\n"
        "        f = d.get('_fields')\n"
        "        vals = d['_values']\n"
        f"        if (f is None or f is NAMES or f == NAMES) and len(vals) >= {arity}:\n"
        f"            {unpack}\n"
        f"            if {fit}:\n"
        f"                if f is NAMES and len(vals) == {arity}:\n"
        "                    return v\n"
        "                row = NEW(ROW)\n"
        "                r = row.__dict__\n"
        f"                r['_values'] = [{values}]\n"
        "                r['_fields'] = NAMES\n"
        "                r['_from_dict'] = False\n"
        "                r['_row_kind'] = d['_row_kind']\n"
        "                return row\n"
        "    return SLOW(v)\n"
    )
    namespace: dict[str, Any] = {"ROW": Row, "NAMES": names, "NEW": new_row, "SLOW": conv}
    namespace.update(_CANONICAL_NAMESPACE)
    exec(compile(source, f"<output conversion {ti!r}>", "exec"), namespace)
    return namespace["conv_row"]  # type: ignore[no-any-return]


def _out_tuple(ti: Any) -> Converter:
    fields = [output_converter(t) for t in ti.get_field_types()]
    arity = len(fields)

    def conv(v: Any) -> tuple[Any, ...]:
        if v.__class__ is not tuple:
            if v is None:
                raise _mismatch(TypeError, "'NoneType' object is not subscriptable")
            raise _mismatch(TypeError, f"Expected tuple, got {_python_type(v)}")
        if len(v) < arity:
            raise _too_few(arity, len(v))
        return tuple([f(x) for f, x in zip(fields, v, strict=False)])

    return conv


def _list_of(v: Any) -> list[Any]:
    if v.__class__ is not list:
        if v is None:
            raise _mismatch(TypeError, "object of type 'NoneType' has no len()")
        raise _mismatch(TypeError, f"Expected list, got {_python_type(v)}")
    return v  # type: ignore[no-any-return]


def _out_array(element: Converter, *, nullable_elements: bool) -> Converter:
    def conv(v: Any) -> list[Any]:
        values = _list_of(v)
        if nullable_elements:
            return [None if x is None else element(x) for x in values]
        return [element(x) for x in values]

    return conv


def _out_bytes(v: Any) -> bytes:
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    raise _mismatch(TypeError, f"expected bytes, {_python_type(v)} found")


def _out_map(ti: Any) -> Converter:
    from flott.common.typeinfo import map_key_hash

    key = output_converter(ti.get_key_type())
    value = output_converter(ti.get_value_type())
    key_hash = map_key_hash(ti.get_key_type())

    def conv(v: Any) -> dict[Any, Any]:
        if not hasattr(v, "items"):
            raise _no_attribute(v, "items")
        items = [(key(k), None if x is None else value(x)) for k, x in v.items()]
        if key_hash is None or len(items) < 2:
            return dict(items)
        return dict(java_hashmap_order(items, key_hash))  # Java holds it as a HashMap in between

    return conv


def output_converter(type_info: Any) -> Converter:
    """The value a declared ``type_info`` turns ``v`` into on its way through Java (raises
    :class:`OutputTypeMismatch` where PyFlink's coder fails). ``None`` is not special here: it
    fails like any other value that does not fit; callers decide where ``null`` is allowed."""
    from flott.common import typeinfo as ti

    if isinstance(type_info, ti.BasicTypeInfo):
        basic = type_info.basic_type
        if basic.value in _INT_BITS:
            return _out_int(_INT_BITS[basic.value])
        simple: dict[ti.BasicType, Converter] = {
            ti.BasicType.STRING: _out_string,
            ti.BasicType.CHAR: _out_string,
            ti.BasicType.BOOLEAN: _out_boolean,
            ti.BasicType.FLOAT: _out_float,
            ti.BasicType.DOUBLE: _c_double,
            ti.BasicType.BIG_INT: _out_int(64),  # PyFlink's DataStream coder for BigInteger is 64-bit
            ti.BasicType.BIG_DEC: _out_big_dec,
            ti.BasicType.INSTANT: _out_instant,
        }
        return simple[basic]
    if isinstance(type_info, ti.DateTypeInfo):
        return _out_sql_date
    if isinstance(type_info, ti.TimeTypeInfo):
        return _out_sql_time
    if isinstance(type_info, ti.TimestampTypeInfo):
        return _out_sql_timestamp
    if isinstance(type_info, ti.RowTypeInfo):
        return _out_row(type_info)
    if isinstance(type_info, ti.TupleTypeInfo):
        return _out_tuple(type_info)
    if isinstance(type_info, ti.MapTypeInfo):
        return _out_map(type_info)
    if isinstance(type_info, ti.PrimitiveArrayTypeInfo):
        element = type_info.get_element_type()
        if isinstance(element, ti.BasicTypeInfo) and element.basic_type is ti.BasicType.BYTE:
            return _out_bytes
        return _out_array(output_converter(element), nullable_elements=False)
    if isinstance(type_info, (ti.BasicArrayTypeInfo, ti.ObjectArrayTypeInfo)):
        return _out_array(output_converter(type_info.get_element_type()), nullable_elements=True)
    if isinstance(type_info, ti.ListTypeInfo):
        return _out_array(output_converter(type_info.elem_type), nullable_elements=False)
    return _identity


def _canonical_expr(type_info: Any, x: str) -> str | None:
    """A Python expression true when the value ``x`` comes out of :func:`output_converter` as it
    is (the batch then passes without a copy); None where only the converter can tell."""
    from flott.common import typeinfo as ti

    if isinstance(type_info, ti.BasicTypeInfo):
        basic = type_info.basic_type
        if basic.value in _INT_BITS or basic is ti.BasicType.BIG_INT:
            bits = _INT_BITS.get(basic.value, 64)
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
            if hi <= _COMPACT_INT:
                return f"({x}.__class__ is INT and {x} >= {lo} and {x} <= {hi})"
            # Comparisons with one-digit constants are specialised by the interpreter (3.11's
            # COMPARE_OP_INT_JUMP), the full range is compared only for larger values.
            compact = f"{x} <= {_COMPACT_INT} and {x} >= {-_COMPACT_INT}"
            return f"({x}.__class__ is INT and ({compact} or {lo} <= {x} <= {hi}))"
        if basic in (ti.BasicType.STRING, ti.BasicType.CHAR):
            return f"{x}.__class__ is STR"
        if basic is ti.BasicType.BOOLEAN:
            return f"{x}.__class__ is BOOL"
        if basic is ti.BasicType.DOUBLE:
            return f"{x}.__class__ is FLOAT"
        if basic is ti.BasicType.FLOAT:
            return f"({x}.__class__ is FLOAT and F32({x}) == {x})"
        return None
    if isinstance(type_info, ti.DateTypeInfo):
        return f"{x}.__class__ is DATE"
    if isinstance(type_info, ti.TupleTypeInfo):
        types = type_info.get_field_types()
        parts = [_canonical_expr(t, f"{x}[{i}]") for i, t in enumerate(types)]
        if any(p is None for p in parts):
            return None
        checks = "".join(f" and {p}" for p in parts)
        return f"({x}.__class__ is TUPLE and len({x}) == {len(types)}{checks})"
    return None


_COMPACT_INT = (1 << 30) - 1
"""The largest int CPython stores in one digit: comparisons with it take the interpreter's fast path."""

_CANONICAL_NAMESPACE: dict[str, Any] = {
    "F32": to_float32,
    "DATE": _dt.date,
    "INT": int,
    "STR": str,
    "BOOL": bool,
    "FLOAT": float,
    "TUPLE": tuple,
}
"""The names :func:`_canonical_expr`'s expressions use (generated checks bind them as locals)."""

_MAX_GENERATED_FIELDS = 32


_NULLABLE_IN_JAVA = ("String", "BigInteger", "BigDecimal", "Instant")
"""Basic types whose Java serializer writes ``null`` (the others fail on a ``null`` record)."""


def java_serializer_takes_null(type_info: Any) -> bool:
    """Whether Flink's serializer of ``type_info`` accepts a ``null`` record (a Python ``None``)."""
    from flott.common import typeinfo as ti

    if isinstance(type_info, ti.BasicTypeInfo):
        return type_info.basic_type.value in _NULLABLE_IN_JAVA
    return isinstance(type_info, (ti.DateTypeInfo, ti.TimeTypeInfo, ti.TimestampTypeInfo))


BatchCheck = Callable[[list[Any]], list[Any]]


def output_type_check(type_info: Any, *, none_allowed: bool, timestamped: bool = False) -> BatchCheck | None:
    """A per-batch check of records against their declared ``type_info``, or None when there is
    nothing to check (no declared type, ``PICKLED_BYTE_ARRAY``, types without a Java counterpart).

    The check returns the batch itself when every value already is what Java would hand back (one
    tight generated loop, no copy), else a new list of converted values; it raises
    :class:`OutputTypeMismatch` with ``value`` set for the first value that does not fit.
    ``timestamped``: records are ``(value, timestamp)`` pairs. ``none_allowed``: a ``None`` record
    passes (inside a keyed edge's row, or a type whose Java serializer writes ``null``)."""
    from flott.common import typeinfo as ti

    if type_info is None or isinstance(type_info, ti.PickledBytesTypeInfo):
        return None
    conv = output_converter(type_info)
    if conv is _identity:
        return None

    def convert(v: Any) -> Any:
        if v is None:
            if none_allowed:
                return None
            raise _mismatch(TypeError, f"a None record, which Flink's serializer of {type_info!r} rejects")
        return conv(v)

    def slow(batch: list[Any]) -> list[Any]:
        out: list[Any] = []
        append = out.append
        for r in batch:
            v = r[0] if timestamped else r
            try:
                c = convert(v)
            except OutputTypeMismatch as e:
                e.value = v
                raise
            append((c, r[1]) if timestamped else c)
        return out

    from flott.common.fit_check import LOCALS, fit_branch, namespace

    var, head = ("v", ["        v = r[0]"]) if timestamped else ("r", [])
    fits = fit_branch(type_info, var, ["continue"], "        ")
    if fits is None:
        return slow
    tail = ["        return SLOW(batch)", "    return batch", ""]
    source = "\n".join([f"def check(batch, {LOCALS}):", "    for r in batch:", *head, *fits, *tail])
    compiled = namespace(SLOW=slow)
    exec(compile(source, f"<output type check {type_info!r}>", "exec"), compiled)
    return compiled["check"]  # type: ignore[no-any-return]


LazyCheck = Callable[[Iterable[Any]], Iterator[Any]]
ValueFix = Callable[[Any], Any]


def output_value_fix(
    type_info: Any,
    *,
    none_allowed: bool,
    timestamped: bool = False,
    on_mismatch: Callable[[OutputTypeMismatch], Exception] | None = None,
) -> ValueFix | None:
    """The slow path of a per-record check: one record (``(value, timestamp)`` if ``timestamped``)
    that a generated check found not to fit as it is, converted as the coder would, or the error
    ``on_mismatch`` makes of the mismatch raised. None when there is nothing to check."""
    from flott.common import typeinfo as ti

    if type_info is None or isinstance(type_info, ti.PickledBytesTypeInfo):
        return None
    conv = output_converter(type_info)
    if conv is _identity:
        return None

    def fix(r: Any) -> Any:
        v = r[0] if timestamped else r
        try:
            if v is None:
                if none_allowed:
                    return r
                rejects = f"a None record, which Flink's serializer of {type_info!r} rejects"
                raise _mismatch(TypeError, rejects)
            c = conv(v)
        except OutputTypeMismatch as e:
            e.value = v
            if on_mismatch is None:
                raise
            raise on_mismatch(e) from None
        return (c, r[1]) if timestamped else c

    return fix


def output_type_check_lazy(
    type_info: Any,
    *,
    none_allowed: bool,
    timestamped: bool = False,
    on_mismatch: Callable[[OutputTypeMismatch], Exception] | None = None,
) -> LazyCheck | None:
    """:func:`output_type_check` as an iterator over the records, for a check in the middle of a
    lazily composed chain: each record is checked while the operator before it just made it (a
    separate pass over a batch costs more than the check, in cache misses). Records that fit pass
    as they are, others are converted; ``on_mismatch`` turns a mismatch into the error to raise."""
    fix = output_value_fix(
        type_info, none_allowed=none_allowed, timestamped=timestamped, on_mismatch=on_mismatch
    )
    if fix is None:
        return None
    from flott.common.fit_check import LOCALS, fit_branch, namespace

    var, head = ("v", ["        v = r[0]"]) if timestamped else ("r", [])
    fits = fit_branch(type_info, var, ["yield r", "continue"], "        ") or []
    tail = ["        yield SLOW(r)", ""]
    source = "\n".join([f"def check(records, {LOCALS}):", "    for r in records:", *head, *fits, *tail])
    compiled = namespace(SLOW=fix)
    exec(compile(source, f"<lazy output type check {type_info!r}>", "exec"), compiled)
    return compiled["check"]  # type: ignore[no-any-return]


# --- Declared key types: key_by(key_selector, key_type) -----------------------------------------
#
# PyFlink's key_by runs the key selector in a Python operator that emits Row(key, value) typed
# Types.ROW([key_type, <the stream's type>]); Java keys the stream on the Row's first field. So
# the key leaves Python through key_type's coder: a key that does not fit fails the job with the
# coder's error (an int declared STRING: "'int' object has no attribute 'encode'"), a key the coder
# converts is converted (1.5 declared INT is the key 1, shared with 1.7; 1 declared FLOAT is 1.0),
# and None passes (a Row field may be null). What partitions the records, what keyed state is
# scoped by and what ctx.get_current_key() returns is that converted key.


class DeclaredKeySelector:
    """A key selector whose keys go through their declared ``key_type`` as PyFlink's do.

    It wraps the user's selector (a KeySelector or a callable) where the keyed stream is built,
    so the producer's partitioner and the keyed operators after the shuffle see the same key.
    ``open``/``close`` reach the user's selector; the converter is built where the key is first
    needed (it is not pickled with the job)."""

    def __init__(self, key_selector: Any, key_type: Any) -> None:
        self.key_selector = key_selector
        self.key_type = key_type
        self._get_key: Converter | None = None
        self._convert: Converter | None = None
        self._task_name = ""

    def __getstate__(self) -> dict[str, Any]:
        return {"key_selector": self.key_selector, "key_type": self.key_type}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["key_selector"], state["key_type"])  # type: ignore[misc]

    def open(self, runtime_context: Any) -> None:
        name = getattr(runtime_context, "get_task_name_with_subtasks", None)
        if callable(name):
            self._task_name = str(name())
        opener = getattr(self.key_selector, "open", None)
        if callable(opener) and not isinstance(self.key_selector, type):
            opener(runtime_context)

    def close(self) -> None:
        closer = getattr(self.key_selector, "close", None)
        if callable(closer) and not isinstance(self.key_selector, type):
            closer()

    def get_key(self, value: Any) -> Any:
        get_key = self._get_key
        convert = self._convert
        if get_key is None or convert is None:
            method = getattr(self.key_selector, "get_key", None)
            get_key = self._get_key = method if callable(method) else self.key_selector
            convert = self._convert = output_converter(self.key_type)
        key = get_key(value)
        if key is None:
            return None
        try:
            return convert(key)
        except OutputTypeMismatch as e:

            message = (
                f"{e.detail}: the key selector of key_by returned {key!r}, which does not fit its "
                f"declared key_type {self.key_type!r}"
            )
            raise UserCodeError(e.error_type.__name__, message, "", self._task_name) from None


def with_declared_key_type(key_selector: Any, key_type: Any) -> Any:
    """``key_selector`` as ``key_by(key_selector, key_type)`` uses it: wrapped in a
    :class:`DeclaredKeySelector` where ``key_type`` checks or converts anything, else itself."""
    from flott.common import typeinfo as ti

    if key_type is None or isinstance(key_type, ti.PickledBytesTypeInfo):
        return key_selector
    if not isinstance(key_type, ti.TypeInformation):
        got = type(key_type).__name__
        raise TypeError(f"key_by(): key_type must be a TypeInformation (Types.*), got {got}")
    if output_converter(key_type) is _identity:
        return key_selector
    return DeclaredKeySelector(key_selector, key_type)
