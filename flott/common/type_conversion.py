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
from collections.abc import Callable
from typing import Any

from flott.common.java_text import java_double_to_string, java_hashmap_order, to_float32
from flott.common.types import Row, RowKind
from flott.errors import InvalidProgramError

__all__ = ["collection_converter", "convert_collection"]

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
