"""``DataTypes``: the logical types of table columns, with Flink's summary strings and value renderings.

A type knows three things the rest of the Table API needs: its summary string (``BIGINT``,
``DECIMAL(10, 2)``, ``INT NOT NULL``, what ``get_schema()`` prints), the width Flink's tableau printer
gives its column (derived from the type, not the data, in both modes), and how a value of it prints
in the tableau (SQL's CAST to STRING: ``TRUE``, ``2024-01-02 03:04:05.123``) and in a ``Row``'s
``toString`` (what the ``print`` connector writes: ``true``, ``2024-01-02T03:04:05.123``).
"""

from __future__ import annotations

import datetime as _dt
import decimal
from collections.abc import Sequence
from typing import Any

from flott.common.java_text import java_double_to_string, java_float_to_string
from flott.common.types import Row
from flott.errors import NotYetSupportedError

__all__ = [
    "ArrayType",
    "BigIntType",
    "BooleanType",
    "BinaryType",
    "CharType",
    "DataType",
    "DataTypes",
    "DateType",
    "DayTimeIntervalType",
    "DecimalType",
    "DoubleType",
    "FloatType",
    "IntType",
    "LocalZonedTimestampType",
    "MapType",
    "RowField",
    "RowType",
    "SmallIntType",
    "TimeType",
    "TimestampType",
    "TinyIntType",
    "VarBinaryType",
    "VarCharType",
]

MAX_COLUMN_WIDTH = 30
NULL_COLUMN = "<NULL>"


class DataType:
    """A logical type; ``nullable`` as in Flink (columns are nullable unless declared NOT NULL)."""

    _name = "?"
    type_root = "?"

    def __init__(self, nullable: bool = True) -> None:
        self._nullable = nullable

    def summary(self) -> str:
        return self._name

    def __str__(self) -> str:
        return self.summary() + ("" if self._nullable else " NOT NULL")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DataType) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def not_null(self) -> DataType:
        return self.with_nullability(False)

    def nullable(self) -> DataType:
        return self.with_nullability(True)

    def with_nullability(self, nullable: bool) -> DataType:
        import copy

        c = copy.copy(self)
        c._nullable = nullable
        return c

    @property
    def is_nullable(self) -> bool:
        return self._nullable

    def print_width(self) -> int:
        """Flink's PrintUtils.columnWidthsByType for this type (before the column name is considered)."""
        return MAX_COLUMN_WIDTH

    def format_sql(self, value: Any) -> str:
        """The value as CAST(... AS STRING) gives it (the tableau format)."""
        return str(value)

    def format_java(self, value: Any) -> str:
        """The value as Java's toString of its external class gives it (Row.toString, print connector)."""
        return self.format_sql(value)


class _Integral(DataType):
    _precision = 0

    def print_width(self) -> int:
        return self._precision + 1


class TinyIntType(_Integral):
    _name, type_root, _precision = "TINYINT", "TINYINT", 3


class SmallIntType(_Integral):
    _name, type_root, _precision = "SMALLINT", "SMALLINT", 5


class IntType(_Integral):
    _name, type_root, _precision = "INT", "INTEGER", 10


class BigIntType(_Integral):
    _name, type_root, _precision = "BIGINT", "BIGINT", 19


class BooleanType(DataType):
    _name, type_root = "BOOLEAN", "BOOLEAN"

    def print_width(self) -> int:
        return 5

    def format_sql(self, value: Any) -> str:
        return "TRUE" if value else "FALSE"

    def format_java(self, value: Any) -> str:
        return "true" if value else "false"


class FloatType(DataType):
    _name, type_root = "FLOAT", "FLOAT"

    def format_sql(self, value: Any) -> str:
        return java_float_to_string(value)


class DoubleType(DataType):
    _name, type_root = "DOUBLE", "DOUBLE"

    def format_sql(self, value: Any) -> str:
        return java_double_to_string(value)


class DecimalType(DataType):
    type_root = "DECIMAL"

    def __init__(self, precision: int = 10, scale: int = 0, nullable: bool = True) -> None:
        super().__init__(nullable)
        self.precision, self.scale = precision, scale

    def summary(self) -> str:
        return f"DECIMAL({self.precision}, {self.scale})"

    def print_width(self) -> int:
        return self.precision + 2

    def format_sql(self, value: Any) -> str:
        d = decimal.Decimal(value).quantize(
            decimal.Decimal(1).scaleb(-self.scale), rounding=decimal.ROUND_HALF_UP
        )
        return f"{d:f}"


class _Chars(DataType):
    def __init__(self, length: int = 1, nullable: bool = True) -> None:
        super().__init__(nullable)
        self.length = length


class CharType(_Chars):
    type_root = "CHAR"

    def summary(self) -> str:
        return f"CHAR({self.length})"


class VarCharType(_Chars):
    type_root = "VARCHAR"
    MAX_LENGTH = 2147483647

    def summary(self) -> str:
        return "STRING" if self.length == self.MAX_LENGTH else f"VARCHAR({self.length})"


class BinaryType(_Chars):
    type_root = "BINARY"

    def summary(self) -> str:
        return f"BINARY({self.length})"

    def format_sql(self, value: Any) -> str:
        return "x'" + bytes(value).hex() + "'"

    def format_java(self, value: Any) -> str:
        return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in bytes(value)) + "]"


class VarBinaryType(BinaryType):
    type_root = "VARBINARY"
    MAX_LENGTH = 2147483647

    def summary(self) -> str:
        return "BYTES" if self.length == self.MAX_LENGTH else f"VARBINARY({self.length})"


class DateType(DataType):
    _name, type_root = "DATE", "DATE"

    def print_width(self) -> int:
        return 10

    def format_sql(self, value: Any) -> str:
        return value.isoformat() if isinstance(value, _dt.date) else str(value)


def _fraction(micros: int, precision: int) -> str:
    if precision <= 0:
        return ""
    digits = f"{micros:06d}" + "000"
    return "." + digits[:precision]


def _java_fraction(micros: int) -> str:
    """java.time's toString: the fraction in groups of three digits, trailing zero groups dropped."""
    if micros == 0:
        return ""
    text = f"{micros:06d}"
    return "." + (text[:3] if text.endswith("000") else text)


class TimeType(DataType):
    type_root = "TIME_WITHOUT_TIME_ZONE"

    def __init__(self, precision: int = 0, nullable: bool = True) -> None:
        super().__init__(nullable)
        self.precision = precision

    def summary(self) -> str:
        return f"TIME({self.precision})"

    def print_width(self) -> int:
        return 8 if self.precision == 0 else self.precision + 9

    def format_sql(self, value: Any) -> str:
        return value.strftime("%H:%M:%S") + _fraction(value.microsecond, self.precision)

    def format_java(self, value: Any) -> str:
        if value.second == 0 and value.microsecond == 0:
            return value.strftime("%H:%M")
        return value.strftime("%H:%M:%S") + _java_fraction(value.microsecond)


class TimestampType(DataType):
    type_root = "TIMESTAMP_WITHOUT_TIME_ZONE"

    def __init__(self, precision: int = 6, nullable: bool = True) -> None:
        super().__init__(nullable)
        self.precision = precision

    def summary(self) -> str:
        return f"TIMESTAMP({self.precision})"

    def print_width(self) -> int:
        return 19 + (self.precision + 1 if self.precision > 0 else 0)

    def format_sql(self, value: Any) -> str:
        return value.strftime("%Y-%m-%d %H:%M:%S") + _fraction(value.microsecond, self.precision)

    def format_java(self, value: Any) -> str:
        head = value.strftime("%Y-%m-%dT%H:%M")
        if value.second == 0 and value.microsecond == 0:
            return head
        return head + value.strftime(":%S") + _java_fraction(value.microsecond)


class LocalZonedTimestampType(TimestampType):
    type_root = "TIMESTAMP_WITH_LOCAL_TIME_ZONE"

    def summary(self) -> str:
        return f"TIMESTAMP_LTZ({self.precision})"


class DayTimeIntervalType(DataType):
    """INTERVAL ... (day-time), values ``datetime.timedelta``; ``unit`` is how the literal was
    written (``SECOND``: Flink's ``INTERVAL SECOND(3)``)."""

    type_root = "INTERVAL_DAY_TIME"

    def __init__(self, unit: str = "SECOND", nullable: bool = True) -> None:
        super().__init__(nullable)
        self.unit = unit

    def summary(self) -> str:
        return "INTERVAL SECOND(3)" if self.unit == "SECOND" else f"INTERVAL {self.unit}"

    def format_sql(self, value: Any) -> str:
        ms = value // _dt.timedelta(milliseconds=1)
        sign = "-" if ms < 0 else "+"
        ms = abs(ms)
        days, rest = divmod(ms, 86_400_000)
        h, rest = divmod(rest, 3_600_000)
        m, rest = divmod(rest, 60_000)
        return f"{sign}{days} {h:02d}:{m:02d}:{rest // 1000:02d}.{rest % 1000:03d}"


class ArrayType(DataType):
    type_root = "ARRAY"

    def __init__(self, element_type: DataType, nullable: bool = True) -> None:
        super().__init__(nullable)
        self.element_type = element_type

    def summary(self) -> str:
        return f"ARRAY<{self.element_type}>"

    def format_sql(self, value: Any) -> str:
        return "[" + ", ".join(_fmt(self.element_type, v, sql=True) for v in value) + "]"

    def format_java(self, value: Any) -> str:
        return "[" + ", ".join(_fmt(self.element_type, v, sql=False) for v in value) + "]"


class MapType(DataType):
    type_root = "MAP"

    def __init__(self, key_type: DataType, value_type: DataType, nullable: bool = True) -> None:
        super().__init__(nullable)
        self.key_type, self.value_type = key_type, value_type

    def summary(self) -> str:
        return f"MAP<{self.key_type}, {self.value_type}>"

    def format_sql(self, value: Any) -> str:
        items = (f"{_fmt(self.key_type, k, True)}={_fmt(self.value_type, v, True)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"

    def format_java(self, value: Any) -> str:
        items = (
            f"{_fmt(self.key_type, k, False)}={_fmt(self.value_type, v, False)}" for k, v in value.items()
        )
        return "{" + ", ".join(items) + "}"


class RowField:
    def __init__(self, name: str, data_type: DataType, description: str | None = None) -> None:
        self.name, self.data_type, self.description = name, data_type, description

    def __str__(self) -> str:
        return f"{self.name} {self.data_type}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RowField) and (self.name, self.data_type) == (other.name, other.data_type)

    def __hash__(self) -> int:
        return hash((self.name, self.data_type))


class RowType(DataType):
    type_root = "ROW"

    def __init__(self, fields: Sequence[RowField], nullable: bool = True) -> None:
        super().__init__(nullable)
        self.fields = list(fields)

    def summary(self) -> str:
        return "ROW<" + ", ".join(f"`{f.name}` {f.data_type}" for f in self.fields) + ">"

    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field_types(self) -> list[DataType]:
        return [f.data_type for f in self.fields]

    def format_sql(self, value: Any) -> str:
        vals = list(value)
        return (
            "(" + ", ".join(_fmt(f.data_type, v, True) for f, v in zip(self.fields, vals, strict=False)) + ")"
        )

    def format_java(self, value: Any) -> str:
        vals = list(value)
        body = ", ".join(_fmt(f.data_type, v, False) for f, v in zip(self.fields, vals, strict=False))
        return "+I[" + body + "]"


def _fmt(t: DataType, v: Any, sql: bool) -> str:
    if v is None:
        return "NULL" if sql else "null"
    return t.format_sql(v) if sql else t.format_java(v)


class DataTypes:
    """Factory of data types, with PyFlink's names and defaults."""

    @staticmethod
    def NULL() -> DataType:
        t = DataType()
        t._name = "NULL"
        return t

    @staticmethod
    def CHAR(length: int, nullable: bool = True) -> CharType:
        return CharType(length, nullable)

    @staticmethod
    def VARCHAR(length: int, nullable: bool = True) -> VarCharType:
        return VarCharType(length, nullable)

    @staticmethod
    def STRING(nullable: bool = True) -> VarCharType:
        return VarCharType(VarCharType.MAX_LENGTH, nullable)

    @staticmethod
    def BOOLEAN(nullable: bool = True) -> BooleanType:
        return BooleanType(nullable)

    @staticmethod
    def BINARY(length: int, nullable: bool = True) -> BinaryType:
        return BinaryType(length, nullable)

    @staticmethod
    def VARBINARY(length: int, nullable: bool = True) -> VarBinaryType:
        return VarBinaryType(length, nullable)

    @staticmethod
    def BYTES(nullable: bool = True) -> VarBinaryType:
        return VarBinaryType(VarBinaryType.MAX_LENGTH, nullable)

    @staticmethod
    def DECIMAL(precision: int, scale: int, nullable: bool = True) -> DecimalType:
        return DecimalType(precision, scale, nullable)

    @staticmethod
    def TINYINT(nullable: bool = True) -> TinyIntType:
        return TinyIntType(nullable)

    @staticmethod
    def SMALLINT(nullable: bool = True) -> SmallIntType:
        return SmallIntType(nullable)

    @staticmethod
    def INT(nullable: bool = True) -> IntType:
        return IntType(nullable)

    @staticmethod
    def BIGINT(nullable: bool = True) -> BigIntType:
        return BigIntType(nullable)

    @staticmethod
    def FLOAT(nullable: bool = True) -> FloatType:
        return FloatType(nullable)

    @staticmethod
    def DOUBLE(nullable: bool = True) -> DoubleType:
        return DoubleType(nullable)

    @staticmethod
    def DATE(nullable: bool = True) -> DateType:
        return DateType(nullable)

    @staticmethod
    def TIME(precision: int = 0, nullable: bool = True) -> TimeType:
        return TimeType(precision, nullable)

    @staticmethod
    def TIMESTAMP(precision: int = 6, nullable: bool = True) -> TimestampType:
        return TimestampType(precision, nullable)

    @staticmethod
    def TIMESTAMP_LTZ(precision: int = 6, nullable: bool = True) -> LocalZonedTimestampType:
        return LocalZonedTimestampType(precision, nullable)

    @staticmethod
    def TIMESTAMP_WITH_LOCAL_TIME_ZONE(precision: int = 6, nullable: bool = True) -> LocalZonedTimestampType:
        return LocalZonedTimestampType(precision, nullable)

    @staticmethod
    def ARRAY(element_type: DataType, nullable: bool = True) -> ArrayType:
        return ArrayType(element_type, nullable)

    @staticmethod
    def MAP(key_type: DataType, value_type: DataType, nullable: bool = True) -> MapType:
        return MapType(key_type, value_type, nullable)

    @staticmethod
    def FIELD(name: str, data_type: DataType, description: str | None = None) -> RowField:
        return RowField(name, data_type, description)

    @staticmethod
    def ROW(row_fields: Sequence[RowField] = (), nullable: bool = True) -> RowType:
        return RowType(row_fields, nullable)


def infer_type(value: Any) -> DataType:
    """The type PyFlink infers for a Python value in ``from_elements`` without a schema."""
    if isinstance(value, bool):
        return BooleanType()
    if isinstance(value, int):
        return BigIntType()
    if isinstance(value, float):
        return DoubleType()
    if isinstance(value, str):
        return VarCharType(VarCharType.MAX_LENGTH)
    if isinstance(value, bytes | bytearray):
        return VarBinaryType(VarBinaryType.MAX_LENGTH)
    if isinstance(value, decimal.Decimal):
        return DecimalType(38, 18)
    if isinstance(value, _dt.datetime):
        return TimestampType(6)
    if isinstance(value, _dt.date):
        return DateType()
    if isinstance(value, _dt.time):
        return TimeType(0)
    if isinstance(value, list):
        first = next((v for v in value if v is not None), None)
        return ArrayType(infer_type(first) if first is not None else VarCharType(VarCharType.MAX_LENGTH))
    if isinstance(value, dict):
        k, v = next(iter(value.items()), ("", ""))
        return MapType(infer_type(k), infer_type(v))
    if isinstance(value, Row):
        names = value._fields if hasattr(value, "_fields") else [f"_{i + 1}" for i in range(len(value))]
        return RowType([RowField(n, infer_type(v)) for n, v in zip(names, value, strict=False)])
    raise NotYetSupportedError(f"from_elements: no type can be inferred for {type(value).__name__} values")
