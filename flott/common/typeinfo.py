"""Type information (``Types.*``) and how declared records are rendered as text.

In PyFlink a declared output type decides what Java sees, and therefore what
``print()`` and the file sinks write: a ``Types.TUPLE`` prints as ``(a,1)``, a
``Types.ROW`` as ``+I[a, 1]``, a ``Types.FLOAT`` after a trip through float32.
Undeclared records (``None`` or ``PICKLED_BYTE_ARRAY``) print as Python's
``str``. :func:`format_record` implements exactly that; sinks should call
:meth:`TypeInformation.make_formatter` once and apply the returned callable to
every record, because the formatter is specialised per type and cheap per call.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from enum import Enum
from typing import Any

from flott.common.java_text import (
    java_boolean_hash,
    java_double_hash,
    java_double_to_string,
    java_float_hash,
    java_float_to_string,
    java_hashmap_order,
    java_instant_to_string,
    java_int_hash,
    java_long_hash,
    java_sql_date_to_string,
    java_sql_time_to_string,
    java_sql_timestamp_to_string,
    java_string_hash,
)
from flott.common.types import Row, RowKind

__all__ = [
    "BasicArrayTypeInfo",
    "BasicType",
    "BasicTypeInfo",
    "DateTypeInfo",
    "Formatter",
    "InstantTypeInfo",
    "ListTypeInfo",
    "MapTypeInfo",
    "ObjectArrayTypeInfo",
    "PickledBytesTypeInfo",
    "PrimitiveArrayTypeInfo",
    "RowTypeInfo",
    "SqlTimeTypeInfo",
    "TimeTypeInfo",
    "TimestampTypeInfo",
    "TupleTypeInfo",
    "TypeInformation",
    "Types",
    "format_lines",
    "format_record",
    "make_formatter",
    "make_print_formatter",
    "map_key_hash",
]

Formatter = Callable[[Any], str]
"""Renders one record (or field) as the text Java's ``toString`` would give."""

_ROW_KIND_SHORT = {kind: kind.short_string() for kind in RowKind}


def _null_or(render: Callable[[Any], str]) -> Formatter:
    """Wrap ``render`` so ``None`` (Java ``null``) prints as ``null``."""

    def fmt(v: Any) -> str:
        return "null" if v is None else render(v)

    return fmt


def _fmt_string(v: Any) -> str:
    if v.__class__ is str:
        return v  # type: ignore[no-any-return]
    return "null" if v is None else str(v)


def _fmt_integral(v: Any) -> str:
    if v.__class__ is int:
        return int.__repr__(v)
    return "null" if v is None else str(int(v))


def _fmt_boolean(v: Any) -> str:
    if v is None:
        return "null"
    return "true" if v else "false"


def _fmt_float(v: Any) -> str:
    return "null" if v is None else java_float_to_string(v)


def _fmt_double(v: Any) -> str:
    return "null" if v is None else java_double_to_string(v)


def _fmt_big_dec(v: Any) -> str:
    if v is None:
        return "null"
    text = str(v)
    return "0" if text == "-0" else text  # BigDecimal has no negative zero


def _fmt_instant(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            v = v.astimezone()
        delta = v - _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
        seconds = delta.days * 86400 + delta.seconds
        return java_instant_to_string(seconds, delta.microseconds * 1000)
    if hasattr(v, "seconds") and hasattr(v, "nanos"):
        return java_instant_to_string(v.seconds, v.nanos)
    return str(v)


def _fmt_sql_date(v: Any) -> str:
    if v is None:
        return "null"
    return java_sql_date_to_string(v) if isinstance(v, _dt.date) else str(v)


def _fmt_sql_time(v: Any) -> str:
    if v is None:
        return "null"
    return java_sql_time_to_string(v) if isinstance(v, (_dt.time, _dt.datetime)) else str(v)


def _fmt_sql_timestamp(v: Any) -> str:
    if v is None:
        return "null"
    return java_sql_timestamp_to_string(v) if isinstance(v, _dt.datetime) else str(v)


def _fmt_python(v: Any) -> str:
    return str(v)


class TypeInformation:
    """Describes the type of a stream's records (or of one field); no JVM behind it in flott."""

    _formatter: Formatter | None = None

    def __init__(self) -> None:
        self._formatter = None

    def need_conversion(self) -> bool:
        """Whether values must be converted when crossing to Java; flott never crosses, so False."""
        return False

    def to_internal_type(self, obj: Any) -> Any:
        return obj

    def from_internal_type(self, obj: Any) -> Any:
        return obj

    def _build_formatter(self) -> Formatter:
        return _fmt_python

    def make_formatter(self) -> Formatter:
        """A callable rendering one value as Java's ``toString`` of its converted value (cached)."""
        fmt = self._formatter
        if fmt is None:
            fmt = self._build_formatter()
            self._formatter = fmt
        return fmt

    def make_field_formatter(self) -> Formatter:
        """The rendering of a value of this type as a field of a Java Tuple or Row.

        Those render fields with ``StringUtils.arrayAwareToString``, which spells arrays out
        (``[1, 2]``) where a bare array's ``toString`` is its identity (``[I@1b6d3586``)."""
        return self.make_formatter()

    def __getstate__(self) -> dict[str, Any]:
        # Formatters are closures built on demand; never ship them inside a JobGraph.
        state = dict(self.__dict__)
        state.pop("_formatter", None)
        state.pop("_field_formatter", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._formatter = None

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self).__name__)

    def __repr__(self) -> str:
        return type(self).__name__


class BasicType(Enum):
    STRING = "String"
    BYTE = "Byte"
    BOOLEAN = "Boolean"
    SHORT = "Short"
    INT = "Integer"
    LONG = "Long"
    FLOAT = "Float"
    DOUBLE = "Double"
    CHAR = "Char"
    BIG_INT = "BigInteger"
    BIG_DEC = "BigDecimal"
    INSTANT = "Instant"


_BASIC_FORMATTERS: dict[BasicType, Formatter] = {
    BasicType.STRING: _fmt_string,
    BasicType.BYTE: _fmt_integral,
    BasicType.BOOLEAN: _fmt_boolean,
    BasicType.SHORT: _fmt_integral,
    BasicType.INT: _fmt_integral,
    BasicType.LONG: _fmt_integral,
    BasicType.FLOAT: _fmt_float,
    BasicType.DOUBLE: _fmt_double,
    BasicType.CHAR: _null_or(str),
    BasicType.BIG_INT: _fmt_integral,
    BasicType.BIG_DEC: _fmt_big_dec,
    BasicType.INSTANT: _fmt_instant,
}

_KEY_HASHES: dict[BasicType, Callable[[Any], int]] = {
    BasicType.STRING: java_string_hash,
    BasicType.BYTE: java_int_hash,
    BasicType.SHORT: java_int_hash,
    BasicType.INT: java_int_hash,
    BasicType.LONG: java_long_hash,
    BasicType.BOOLEAN: java_boolean_hash,
    BasicType.FLOAT: java_float_hash,
    BasicType.DOUBLE: java_double_hash,
    BasicType.CHAR: lambda c: ord(c) & 0xFFFF,
}


def map_key_hash(key_type: TypeInformation) -> Callable[[Any], int] | None:
    """Java's ``hashCode`` for keys of ``key_type`` (decides HashMap order), if we model it."""
    return _KEY_HASHES.get(key_type.basic_type) if isinstance(key_type, BasicTypeInfo) else None


class BasicTypeInfo(TypeInformation):
    """Primitive types (int, long, double, byte, ...), String, BigInteger and BigDecimal."""

    def __init__(self, basic_type: BasicType) -> None:
        super().__init__()
        self._basic_type = basic_type

    @property
    def basic_type(self) -> BasicType:
        return self._basic_type

    def _build_formatter(self) -> Formatter:
        return _BASIC_FORMATTERS[self._basic_type]

    def __eq__(self, o: object) -> bool:
        return isinstance(o, BasicTypeInfo) and self._basic_type == o._basic_type

    def __hash__(self) -> int:
        return hash(self._basic_type)

    def __repr__(self) -> str:
        return self._basic_type.value

    @staticmethod
    def STRING_TYPE_INFO() -> BasicTypeInfo:
        return BasicTypeInfo(BasicType.STRING)

    @staticmethod
    def BOOLEAN_TYPE_INFO() -> BasicTypeInfo:
        return BasicTypeInfo(BasicType.BOOLEAN)

    @staticmethod
    def BYTE_TYPE_INFO() -> BasicTypeInfo:
        return BasicTypeInfo(BasicType.BYTE)

    @staticmethod
    def SHORT_TYPE_INFO() -> BasicTypeInfo:
        return BasicTypeInfo(BasicType.SHORT)

    @staticmethod
    def INT_TYPE_INFO() -> BasicTypeInfo:
        return BasicTypeInfo(BasicType.INT)

    @staticmethod
    def LONG_TYPE_INFO() -> BasicTypeInfo:
        return BasicTypeInfo(BasicType.LONG)

    @staticmethod
    def FLOAT_TYPE_INFO() -> BasicTypeInfo:
        return BasicTypeInfo(BasicType.FLOAT)

    @staticmethod
    def DOUBLE_TYPE_INFO() -> BasicTypeInfo:
        return BasicTypeInfo(BasicType.DOUBLE)

    @staticmethod
    def CHAR_TYPE_INFO() -> BasicTypeInfo:
        return BasicTypeInfo(BasicType.CHAR)

    @staticmethod
    def BIG_INT_TYPE_INFO() -> BasicTypeInfo:
        return BasicTypeInfo(BasicType.BIG_INT)

    @staticmethod
    def BIG_DEC_TYPE_INFO() -> BasicTypeInfo:
        return BasicTypeInfo(BasicType.BIG_DEC)

    @staticmethod
    def INSTANT_TYPE_INFO() -> InstantTypeInfo:
        return InstantTypeInfo(BasicType.INSTANT)


class InstantTypeInfo(BasicTypeInfo):
    """``java.time.Instant``; Python values are :class:`flott.common.time.Instant` (or datetimes)."""

    def __init__(self, basic_type: BasicType = BasicType.INSTANT) -> None:
        super().__init__(basic_type)


class DateTypeInfo(TypeInformation):
    """``java.sql.Date``; Python values are ``datetime.date``."""

    def _build_formatter(self) -> Formatter:
        return _fmt_sql_date

    def __repr__(self) -> str:
        return "DateTypeInfo"


class TimeTypeInfo(TypeInformation):
    """``java.sql.Time``; Python values are ``datetime.time``."""

    def _build_formatter(self) -> Formatter:
        return _fmt_sql_time

    def __repr__(self) -> str:
        return "TimeTypeInfo"


class TimestampTypeInfo(TypeInformation):
    """``java.sql.Timestamp``; Python values are ``datetime.datetime``."""

    def _build_formatter(self) -> Formatter:
        return _fmt_sql_timestamp

    def __repr__(self) -> str:
        return "TimestampTypeInfo"


class SqlTimeTypeInfo:
    """Factories for the ``java.sql`` date/time types."""

    @staticmethod
    def DATE() -> DateTypeInfo:
        return DateTypeInfo()

    @staticmethod
    def TIME() -> TimeTypeInfo:
        return TimeTypeInfo()

    @staticmethod
    def TIMESTAMP() -> TimestampTypeInfo:
        return TimestampTypeInfo()


_INT_LIKE = (BasicType.INT, BasicType.LONG, BasicType.SHORT, BasicType.BYTE, BasicType.BIG_INT)
_MAX_GENERATED_FIELDS = 64


def _inline(t: TypeInformation, var: str, fname: str) -> str:
    """A Python expression rendering ``var`` of type ``t``; exact-class fast paths inline the
    commonest cases (str, int, bool) and everything else calls the field's formatter ``fname``."""
    basic = t.basic_type if isinstance(t, BasicTypeInfo) else None
    if basic is BasicType.STRING:
        return f"({var} if {var}.__class__ is str else {fname}({var}))"
    if basic in _INT_LIKE:
        return f"(str({var}) if {var}.__class__ is int else {fname}({var}))"
    if basic is BasicType.BOOLEAN:
        return f'("true" if {var} is True else "false" if {var} is False else {fname}({var}))'
    return f"{fname}({var})"


def _inline_formatted(t: TypeInformation, var: str, fname: str) -> str:
    """:func:`_inline` for a replacement field of a generated f-string (``{...}``): there an
    exact ``str`` or ``int`` is rendered without a call (``format(x, "")`` is ``str(x)`` for
    both); single quotes only, the f-string is double-quoted."""
    basic = t.basic_type if isinstance(t, BasicTypeInfo) else None
    if basic is BasicType.STRING:
        return f"{var} if {var}.__class__ is str else {fname}({var})"
    if basic in _INT_LIKE:
        return f"{var} if {var}.__class__ is int else {fname}({var})"
    if basic is BasicType.BOOLEAN:
        return f"'true' if {var} is True else 'false' if {var} is False else {fname}({var})"
    return f"{fname}({var})"


def _generate(name: str, source: str, namespace: dict[str, Any]) -> Formatter:
    """Compile a specialised formatter: per-record cost is what sinks pay, so the field
    loop is unrolled into straight-line code instead of zip/join over formatter lists."""
    exec(compile(source, f"<flott formatter {name}>", "exec"), namespace)
    return namespace[name]  # type: ignore[no-any-return]


_JAVA_BOXED_NAMES = {
    BasicType.STRING: "java.lang.String",
    BasicType.BYTE: "java.lang.Byte",
    BasicType.BOOLEAN: "java.lang.Boolean",
    BasicType.SHORT: "java.lang.Short",
    BasicType.INT: "java.lang.Integer",
    BasicType.LONG: "java.lang.Long",
    BasicType.FLOAT: "java.lang.Float",
    BasicType.DOUBLE: "java.lang.Double",
    BasicType.CHAR: "java.lang.Character",
    BasicType.BIG_INT: "java.math.BigInteger",
    BasicType.BIG_DEC: "java.math.BigDecimal",
    BasicType.INSTANT: "java.time.Instant",
}
_JAVA_PRIMITIVE_CODES = {
    BasicType.BOOLEAN: "Z",
    BasicType.BYTE: "B",
    BasicType.SHORT: "S",
    BasicType.INT: "I",
    BasicType.LONG: "J",
    BasicType.FLOAT: "F",
    BasicType.DOUBLE: "D",
    BasicType.CHAR: "C",
}


def _identity_formatter(class_name: str) -> Formatter:
    """``Object.toString`` of a Java array: its class name and identity hash, e.g. ``[I@1b6d3586``.

    The hash is the object's identity, so (as in Java) it differs between runs."""

    def fmt(v: Any) -> str:
        return "null" if v is None else f"{class_name}@{(id(v) >> 4) & 0x7FFFFFFF:x}"

    return fmt


class _ArrayTypeInfo(TypeInformation):
    """Java arrays: their own ``toString`` is an identity, as fields they print ``[a, b]``."""

    _field_formatter: Formatter | None = None

    def __init__(self, element_type: TypeInformation) -> None:
        super().__init__()
        self._element_type = element_type

    def get_element_type(self) -> TypeInformation:
        return self._element_type

    def _java_class_name(self) -> str:
        element = self._element_type
        name = _JAVA_BOXED_NAMES.get(element.basic_type) if isinstance(element, BasicTypeInfo) else None
        return f"[L{name or 'java.lang.Object'};"

    def _build_formatter(self) -> Formatter:
        return _identity_formatter(self._java_class_name())

    def _build_field_formatter(self) -> Formatter:
        return _sequence_formatter(self._element_type)

    def make_field_formatter(self) -> Formatter:
        fmt = self._field_formatter
        if fmt is None:
            fmt = self._build_field_formatter()
            self._field_formatter = fmt
        return fmt

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._field_formatter = None


def _sequence_formatter(element: TypeInformation) -> Formatter:
    """``Arrays.toString`` / ``ArrayList.toString``: ``[a, b]`` with elements' ``toString``."""
    source = (
        "def fmt_seq(v):\n"
        "    if v is None:\n"
        "        return 'null'\n"
        f"    return '[' + ', '.join([{_inline(element, 'x', 'EF')} for x in v]) + ']'\n"
    )
    return _generate("fmt_seq", source, {"EF": element.make_formatter()})


JAVA_PRIMITIVE_TYPES: frozenset[BasicType] = frozenset(
    {
        BasicType.BOOLEAN,
        BasicType.BYTE,
        BasicType.SHORT,
        BasicType.INT,
        BasicType.LONG,
        BasicType.FLOAT,
        BasicType.DOUBLE,
        BasicType.CHAR,
    }
)
"""The basic types that are Java primitives: a primitive array's elements, and the fields the
Table API derives as NOT NULL from a stream's type."""


class PrimitiveArrayTypeInfo(_ArrayTypeInfo):
    """Arrays of primitives (``int[]``, ``byte[]``...); ``byte[]`` maps to Python ``bytes``."""

    def __init__(self, element_type: TypeInformation) -> None:
        if not (
            isinstance(element_type, BasicTypeInfo) and element_type.basic_type in JAVA_PRIMITIVE_TYPES
        ):
            raise TypeError("Invalid element type for a primitive array.")
        super().__init__(element_type)

    def _java_class_name(self) -> str:
        return "[" + _JAVA_PRIMITIVE_CODES[self._element_type.basic_type]  # type: ignore[attr-defined]

    def _build_field_formatter(self) -> Formatter:
        basic = self._element_type.basic_type  # type: ignore[attr-defined]
        generic = _sequence_formatter(self._element_type)
        if basic is BasicType.BYTE:

            def fmt_bytes(v: Any) -> str:
                if isinstance(v, (bytes, bytearray, memoryview)):
                    # Java bytes are signed.
                    return "[" + ", ".join([str(b - 256 if b > 127 else b) for b in bytes(v)]) + "]"
                return generic(v)

            return fmt_bytes
        return generic

    def __eq__(self, o: object) -> bool:
        return isinstance(o, PrimitiveArrayTypeInfo) and self._element_type == o._element_type

    def __hash__(self) -> int:
        return hash(("PrimitiveArray", self._element_type))

    def __repr__(self) -> str:
        return f"PrimitiveArrayTypeInfo<{self._element_type}>"


class BasicArrayTypeInfo(_ArrayTypeInfo):
    """Arrays of boxed basic types (``Integer[]``, ``String[]``...); Python lists."""

    def __init__(self, element_type: TypeInformation) -> None:
        if not isinstance(element_type, BasicTypeInfo) or element_type.basic_type in (
            BasicType.BIG_INT,
            BasicType.BIG_DEC,
            BasicType.INSTANT,
        ):
            raise TypeError("Invalid element type for a basic array.")
        super().__init__(element_type)

    def __eq__(self, o: object) -> bool:
        return isinstance(o, BasicArrayTypeInfo) and self._element_type == o._element_type

    def __hash__(self) -> int:
        return hash(("BasicArray", self._element_type))

    def __repr__(self) -> str:
        return f"BasicArrayTypeInfo<{self._element_type}>"


class ObjectArrayTypeInfo(_ArrayTypeInfo):
    """Arrays of any element type; Python lists."""

    def __eq__(self, o: object) -> bool:
        return isinstance(o, ObjectArrayTypeInfo) and self._element_type == o._element_type

    def __hash__(self) -> int:
        return hash(("ObjectArray", self._element_type))

    def __repr__(self) -> str:
        return f"ObjectArrayTypeInfo<{self._element_type}>"


class PickledBytesTypeInfo(TypeInformation):
    """Any picklable Python object: the "undeclared" type; prints with Python's ``str``."""

    @staticmethod
    def PICKLED_BYTE_ARRAY_TYPE_INFO() -> PickledBytesTypeInfo:
        return PickledBytesTypeInfo()

    def __repr__(self) -> str:
        return "PickledByteArrayTypeInfo"


class RowTypeInfo(TypeInformation):
    """Rows (``+I[a, 1]``); unnamed rows get Java's default field names ``f0, f1, ...``."""

    def __init__(self, field_types: list[TypeInformation], field_names: list[str] | None = None) -> None:
        super().__init__()
        self._field_types = list(field_types)
        self._field_names = list(field_names) if field_names is not None else None
        if self._field_names is not None and len(self._field_names) != len(self._field_types):
            raise ValueError("Number of field names and field types must be equal.")

    def get_field_names(self) -> list[str]:
        if self._field_names is None:
            return [f"f{i}" for i in range(len(self._field_types))]
        return list(self._field_names)

    def get_field_index(self, field_name: str) -> int:
        if self._field_names:
            return self._field_names.index(field_name)
        return -1

    def get_field_types(self) -> list[TypeInformation]:
        return list(self._field_types)

    def _build_formatter(self) -> Formatter:
        fmts = [t.make_field_formatter() for t in self._field_types]
        declared_names = self._field_names
        names = self.get_field_names()
        short = _ROW_KIND_SHORT

        def values_of(v: Any) -> tuple[str, Any]:
            if isinstance(v, Row):
                d = v.__dict__
                fields = d.get("_fields")
                vals = d["_values"]
                if declared_names is not None and fields is not None and fields != declared_names:
                    vals = [v[n] for n in declared_names]
                return short[d["_row_kind"]], vals
            if isinstance(v, (tuple, list)):
                return "+I", v
            if isinstance(v, dict):
                return "+I", [v.get(n) for n in names]
            if hasattr(v, "__dict__"):
                attrs = v.__dict__
                return "+I", [attrs.get(n) for n in names]
            raise ValueError(f"Unexpected tuple {v!r} with RowTypeInfo")

        def fmt_generic(v: Any) -> str:
            if v is None:
                return "null"
            kind, vals = values_of(v)
            return kind + "[" + ", ".join([f(x) for f, x in zip(fmts, vals, strict=False)]) + "]"

        types = self._field_types
        n = len(types)
        if n == 0 or n > _MAX_GENERATED_FIELDS:
            return fmt_generic
        names_src = ", ".join(f"a{i}" for i in range(n)) + ("," if n == 1 else "")
        body = ' + ", " + '.join(_inline(t, f"a{i}", f"F{i}") for i, t in enumerate(types))
        source = (
            "def fmt_row(v):\n"
            "    c = v.__class__\n"
            "    if c is tuple or c is list:\n"
            "        k = '+I'\n"
            "        vals = v\n"
            "    elif c is ROW:\n"
            "        d = v.__dict__\n"
            "        k = SHORT[d['_row_kind']]\n"
            "        vals = d['_values']\n"
            "        if NAMES is not None and d.get('_fields', NAMES) != NAMES:\n"
            "            vals = [v[n] for n in NAMES]\n"
            "    elif v is None:\n"
            "        return 'null'\n"
            "    else:\n"
            "        k, vals = VALUES_OF(v)\n"
            "    try:\n"
            f"        {names_src} = vals\n"
            "    except (ValueError, TypeError):\n"
            "        return GENERIC(v)\n"
            f"    return k + '[' + {body} + ']'\n"
        )
        namespace: dict[str, Any] = {f"F{i}": f for i, f in enumerate(fmts)}
        namespace.update(VALUES_OF=values_of, GENERIC=fmt_generic, ROW=Row, SHORT=short, NAMES=declared_names)
        return _generate("fmt_row", source, namespace)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RowTypeInfo) and self._field_types == other._field_types

    def __hash__(self) -> int:
        return hash(("Row", tuple(self._field_types)))

    def __repr__(self) -> str:
        if self._field_names:
            inner = ", ".join(f"{n}: {t}" for n, t in zip(self._field_names, self._field_types, strict=True))
            return f"RowTypeInfo({inner})"
        return "RowTypeInfo({})".format(", ".join(str(t) for t in self._field_types))


class TupleTypeInfo(TypeInformation):
    """Java tuples (``Tuple2``...): print as ``(a,1)``, no spaces."""

    def __init__(self, field_types: list[TypeInformation]) -> None:
        super().__init__()
        self._field_types = list(field_types)

    def get_field_types(self) -> list[TypeInformation]:
        return list(self._field_types)

    def _build_formatter(self) -> Formatter:
        types = self._field_types
        fmts = [t.make_field_formatter() for t in types]

        def fmt_generic(v: Any) -> str:
            if v is None:
                return "null"
            return "(" + ",".join([f(x) for f, x in zip(fmts, v, strict=False)]) + ")"

        n = len(types)
        if n == 0 or n > _MAX_GENERATED_FIELDS:
            return fmt_generic
        names = ", ".join(f"a{i}" for i in range(n)) + ("," if n == 1 else "")
        body = ' + "," + '.join(_inline(t, f"a{i}", f"F{i}") for i, t in enumerate(types))
        source = (
            "def fmt_tuple(v):\n"
            "    if v is None:\n"
            "        return 'null'\n"
            "    try:\n"
            f"        {names} = v\n"
            "    except (ValueError, TypeError):\n"
            "        return GENERIC(v)\n"
            f"    return '(' + {body} + ')'\n"
        )
        namespace: dict[str, Any] = {f"F{i}": f for i, f in enumerate(fmts)}
        namespace["GENERIC"] = fmt_generic
        fmt = _generate("fmt_tuple", source, namespace)
        # The same rendering for a whole batch (what sinks write): the per-record call is the
        # larger part of formatting a small tuple, so the batch version inlines the fields into
        # one comprehension. Any record it cannot unpack (None, wrong arity) sends the batch
        # through ``fmt_tuple`` record by record, which renders those as above.
        fields = ",".join("{" + _inline_formatted(t, f"a{i}", f"F{i}") + "}" for i, t in enumerate(types))
        lines = (
            "def fmt_tuple_lines(records, sep):\n"
            "    try:\n"
            f"        return sep.join([f\"({fields})\" for {names} in records])\n"
            "    except (ValueError, TypeError):\n"
            "        return sep.join([FMT(v) for v in records])\n"
        )
        namespace["FMT"] = fmt
        fmt.lines = _generate("fmt_tuple_lines", lines, namespace)  # type: ignore[attr-defined]
        return fmt

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TupleTypeInfo) and self._field_types == other._field_types

    def __hash__(self) -> int:
        return hash(("Tuple", tuple(self._field_types)))

    def __repr__(self) -> str:
        return "TupleTypeInfo({})".format(", ".join(str(t) for t in self._field_types))


class ListTypeInfo(TypeInformation):
    """``java.util.List`` of the element type; Python lists."""

    def __init__(self, element_type: TypeInformation) -> None:
        super().__init__()
        self.elem_type = element_type

    def _build_formatter(self) -> Formatter:
        return _sequence_formatter(self.elem_type)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ListTypeInfo) and self.elem_type == other.elem_type

    def __hash__(self) -> int:
        return hash(("List", self.elem_type))

    def __repr__(self) -> str:
        return f"ListTypeInfo<{self.elem_type}>"


class MapTypeInfo(TypeInformation):
    """``java.util.Map`` (a ``HashMap`` on the Java side): prints ``{k=v, ...}`` in HashMap order."""

    def __init__(self, key_type_info: TypeInformation, value_type_info: TypeInformation) -> None:
        super().__init__()
        self._key_type_info = key_type_info
        self._value_type_info = value_type_info

    def get_key_type(self) -> TypeInformation:
        return self._key_type_info

    def get_value_type(self) -> TypeInformation:
        return self._value_type_info

    def _build_formatter(self) -> Formatter:
        kf = self._key_type_info.make_formatter()
        vf = self._value_type_info.make_formatter()
        key_hash = map_key_hash(self._key_type_info)

        def fmt(v: Any) -> str:
            if v is None:
                return "null"
            items = list(v.items())
            if key_hash is not None and len(items) > 1:
                try:
                    items = java_hashmap_order(items, key_hash)
                except (TypeError, ValueError, AttributeError):
                    pass  # value does not match the declared key type: keep insertion order
            return "{" + ", ".join([kf(k) + "=" + vf(x) for k, x in items]) + "}"

        return fmt

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MapTypeInfo)
            and self._key_type_info == other._key_type_info
            and self._value_type_info == other._value_type_info
        )

    def __hash__(self) -> int:
        return hash(("Map", self._key_type_info, self._value_type_info))

    def __repr__(self) -> str:
        return f"MapTypeInfo<{self._key_type_info}, {self._value_type_info}>"


class Types:
    """Factories of type information, named like PyFlink's ``Types`` (``Types.INT()``...)."""

    @staticmethod
    def STRING() -> TypeInformation:
        return BasicTypeInfo.STRING_TYPE_INFO()

    @staticmethod
    def BYTE() -> TypeInformation:
        return BasicTypeInfo.BYTE_TYPE_INFO()

    @staticmethod
    def BOOLEAN() -> TypeInformation:
        return BasicTypeInfo.BOOLEAN_TYPE_INFO()

    @staticmethod
    def SHORT() -> TypeInformation:
        return BasicTypeInfo.SHORT_TYPE_INFO()

    @staticmethod
    def INT() -> TypeInformation:
        return BasicTypeInfo.INT_TYPE_INFO()

    @staticmethod
    def LONG() -> TypeInformation:
        return BasicTypeInfo.LONG_TYPE_INFO()

    @staticmethod
    def FLOAT() -> TypeInformation:
        return BasicTypeInfo.FLOAT_TYPE_INFO()

    @staticmethod
    def DOUBLE() -> TypeInformation:
        return BasicTypeInfo.DOUBLE_TYPE_INFO()

    @staticmethod
    def CHAR() -> TypeInformation:
        return BasicTypeInfo.CHAR_TYPE_INFO()

    @staticmethod
    def BIG_INT() -> TypeInformation:
        return BasicTypeInfo.BIG_INT_TYPE_INFO()

    @staticmethod
    def BIG_DEC() -> TypeInformation:
        return BasicTypeInfo.BIG_DEC_TYPE_INFO()

    @staticmethod
    def INSTANT() -> TypeInformation:
        return BasicTypeInfo.INSTANT_TYPE_INFO()

    @staticmethod
    def SQL_DATE() -> TypeInformation:
        return SqlTimeTypeInfo.DATE()

    @staticmethod
    def SQL_TIME() -> TypeInformation:
        return SqlTimeTypeInfo.TIME()

    @staticmethod
    def SQL_TIMESTAMP() -> TypeInformation:
        return SqlTimeTypeInfo.TIMESTAMP()

    @staticmethod
    def PICKLED_BYTE_ARRAY() -> TypeInformation:
        return PickledBytesTypeInfo.PICKLED_BYTE_ARRAY_TYPE_INFO()

    @staticmethod
    def ROW(field_types: list[TypeInformation]) -> RowTypeInfo:
        return RowTypeInfo(field_types)

    @staticmethod
    def ROW_NAMED(field_names: list[str], field_types: list[TypeInformation]) -> RowTypeInfo:
        return RowTypeInfo(field_types, field_names)

    @staticmethod
    def TUPLE(field_types: list[TypeInformation]) -> TupleTypeInfo:
        return TupleTypeInfo(field_types)

    @staticmethod
    def PRIMITIVE_ARRAY(element_type: TypeInformation) -> PrimitiveArrayTypeInfo:
        return PrimitiveArrayTypeInfo(element_type)

    @staticmethod
    def BASIC_ARRAY(element_type: TypeInformation) -> TypeInformation:
        return BasicArrayTypeInfo(element_type)

    @staticmethod
    def OBJECT_ARRAY(element_type: TypeInformation) -> TypeInformation:
        return ObjectArrayTypeInfo(element_type)

    @staticmethod
    def MAP(key_type_info: TypeInformation, value_type_info: TypeInformation) -> TypeInformation:
        return MapTypeInfo(key_type_info, value_type_info)

    @staticmethod
    def LIST(element_type_info: TypeInformation) -> TypeInformation:
        return ListTypeInfo(element_type_info)


def make_formatter(type_info: TypeInformation | None) -> Formatter:
    """The per-record renderer for a stream of ``type_info`` (``str`` when undeclared)."""
    if type_info is None:
        return str
    return type_info.make_formatter()


def _python_row_text(v: Any) -> str:
    """PyFlink's print of a Row stream: ``<kind>[<str(f0)>,<str(f1)>...]``, no spaces."""
    if v.__class__ is Row:
        d = v.__dict__
        return _ROW_KIND_SHORT[d["_row_kind"]] + "[" + ",".join(map(str, d["_values"])) + "]"
    if v is None:
        return "None"
    if isinstance(v, (tuple, list)):
        return "+I[" + ",".join(map(str, v)) + "]"
    return str(v)


def make_print_formatter(type_info: TypeInformation | None) -> Formatter:
    """The per-record renderer of ``DataStream.print()``.

    PyFlink's ``print()`` converts two kinds of streams to text in Python before Java
    prints them: undeclared ones with ``str`` and Row streams as ``+I[a,1]`` (the fields'
    Python ``str``, comma-separated). Everything else prints with Java's ``toString``."""
    if type_info is None or isinstance(type_info, PickledBytesTypeInfo):
        return str
    if isinstance(type_info, RowTypeInfo):
        return _python_row_text
    return type_info.make_formatter()


def format_lines(records: list[Any], fmt: Formatter, prefix: str = "") -> str:
    """``prefix + text + "\\n"`` for every record, as one string (what line-based sinks write).

    Records that are already ``str`` under a string/undeclared type are joined directly,
    skipping the per-record formatter call; a formatter with a ``lines(records, sep)``
    attribute (tuples) renders the whole batch in one generated comprehension."""
    sep = "\n" + prefix
    if fmt is str or fmt is _fmt_string:
        try:
            return prefix + sep.join(records) + "\n"
        except TypeError:
            pass  # not all records are str
    lines = getattr(fmt, "lines", None)
    if lines is not None:
        return prefix + lines(records, sep) + "\n"
    return prefix + sep.join([fmt(r) for r in records]) + "\n"


def format_record(value: Any, type_info: TypeInformation | None) -> str:
    """Render ``value`` as PyFlink's print/file sinks would (see module docstring)."""
    if type_info is None:
        return str(value)
    return type_info.make_formatter()(value)
