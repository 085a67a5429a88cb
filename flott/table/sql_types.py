"""SQL type names (``BIGINT``, ``VARCHAR(10)``, ``DECIMAL(10, 2)``, ``TIMESTAMP(3)``) to DataTypes,
from sqlglot's parsed DataType nodes."""

from __future__ import annotations

import re
from typing import Any

from flott.errors import NotYetSupportedError
from flott.table.planner import validation_error
from flott.table.types import DataType, DataTypes, RowField

_SIMPLE = {
    "BIGINT": DataTypes.BIGINT,
    "INT": DataTypes.INT,
    "SMALLINT": DataTypes.SMALLINT,
    "TINYINT": DataTypes.TINYINT,
    "BOOLEAN": DataTypes.BOOLEAN,
    "DOUBLE": DataTypes.DOUBLE,
    "FLOAT": DataTypes.FLOAT,
    "DATE": DataTypes.DATE,
    "TEXT": DataTypes.STRING,
}

BYTES_STAND_IN = "JSONB"
"""Flink's ``BYTES`` (a reserved word there, so never a column name) is a type sqlglot's Spark
dialect does not know: it reaches sqlglot spelled ``JSONB``, a type of the same length no Flink
program can name, so every position sqlglot reports still points into the user's text."""


def _int_param(dt: Any, i: int, default: int) -> int:
    params = dt.expressions
    if len(params) <= i:
        return default
    return int(params[i].this.this if hasattr(params[i].this, "this") else params[i].name)


def from_sqlglot(dt: Any) -> DataType:
    """A DataType for sqlglot's ``exp.DataType`` node."""
    name = dt.this.name if hasattr(dt.this, "name") else str(dt.this)
    if name in ("VARCHAR", "CHAR", "NVARCHAR", "NCHAR"):
        if not dt.expressions:
            return DataTypes.STRING() if name.endswith("VARCHAR") else DataTypes.CHAR(1)
        n = _int_param(dt, 0, 1)
        return DataTypes.VARCHAR(n) if name.endswith("VARCHAR") else DataTypes.CHAR(n)
    if name in _SIMPLE:
        return _SIMPLE[name]()
    if name == BYTES_STAND_IN:
        return DataTypes.BYTES()
    if name == "BINARY":  # Flink: BINARY is BINARY(1), VARBINARY without a length is BYTES
        return DataTypes.BINARY(_int_param(dt, 0, 1))
    if name == "VARBINARY":
        return DataTypes.VARBINARY(_int_param(dt, 0, 0)) if dt.expressions else DataTypes.BYTES()
    if name == "DECIMAL":
        return DataTypes.DECIMAL(_int_param(dt, 0, 10), _int_param(dt, 1, 0))
    if name in ("TIMESTAMP", "DATETIME", "TIMESTAMPTZ"):  # sqlglot's Spark dialect reads TIMESTAMP so
        return DataTypes.TIMESTAMP(_int_param(dt, 0, 6))
    if name == "TIMESTAMPLTZ":
        return DataTypes.TIMESTAMP_LTZ(_int_param(dt, 0, 6))
    if name == "TIME":
        return DataTypes.TIME(_int_param(dt, 0, 0))
    if name == "ARRAY":
        return DataTypes.ARRAY(from_sqlglot(dt.expressions[0]))
    if name == "MAP":
        return DataTypes.MAP(from_sqlglot(dt.expressions[0]), from_sqlglot(dt.expressions[1]))
    if name == "STRUCT":
        return DataTypes.ROW([RowField(c.name, from_sqlglot(c.args["kind"])) for c in dt.expressions])
    raise NotYetSupportedError(f"the SQL type {dt.sql('spark')} is not yet supported")


def spell_bytes_for_sqlglot(text: str, tokens: list[Any]) -> str:
    """``text`` with each ``BYTES`` type written as :data:`BYTES_STAND_IN` (same length).

    ``tokens`` are sqlglot's Spark tokens of ``text``; a quoted identifier is left alone. A
    program that writes the stand-in itself gets the error Flink gives for an unknown type.
    """
    for t in tokens:
        name = t.text.upper()
        if t.end - t.start + 1 != len(name):  # a quoted identifier or a string
            continue
        if name == BYTES_STAND_IN:
            first = t.col - len(name) + 1
            raise validation_error(
                f"SQL validation failed. From line {t.line}, column {first} to line {t.line}, "
                f"column {t.col}: Unknown identifier '{name}'"
            )
        if name == "BYTES":
            text = text[: t.start] + BYTES_STAND_IN + text[t.end + 1 :]
    return text


def parse_type(text: str) -> DataType:
    """A DataType from its SQL spelling (``'BIGINT'``, ``'STRING NOT NULL'``)."""
    import sqlglot
    from sqlglot import exp

    nullable = True
    t = text.strip()
    if t.upper().endswith("NOT NULL"):
        nullable, t = False, t[: -len("NOT NULL")].strip()
    t = re.sub(r"\bROW\s*<", "STRUCT<", t, flags=re.IGNORECASE)  # Flink's ROW<a INT>, Spark's STRUCT
    cast = f"CAST(NULL AS {t})"
    cast = spell_bytes_for_sqlglot(cast, list(sqlglot.Dialect.get_or_raise("spark").tokenize(cast)))
    node = sqlglot.parse_one(cast, read="spark")
    assert isinstance(node, exp.Cast)
    return from_sqlglot(node.args["to"]).with_nullability(nullable)
