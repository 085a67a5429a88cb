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


ROW_STAND_IN = "UUID"
"""A column whose type holds ``ROW<..>`` / ``ROW(..)`` (Flink's spelling; sqlglot's Spark dialect
has ``STRUCT<..>``, longer) reaches sqlglot typed ``UUID`` padded with blanks; the type itself is
kept by column name and parsed on its own (:func:`parse_type`)."""

_NESTING = ("ROW", "MAP", "ARRAY", "MULTISET")


def _type_end(tokens: list[Any], i: int) -> int:
    """The index of the last token of the nested type starting at ``tokens[i]`` (ROW/MAP/ARRAY/
    MULTISET followed by ``<``, or ROW followed by ``(``), or -1 when it is not one."""
    if i + 1 >= len(tokens) or tokens[i].text.upper() not in _NESTING:
        return -1
    opener = tokens[i + 1].token_type.name
    if opener not in ("LT", "L_PAREN") or (opener == "L_PAREN" and tokens[i].text.upper() != "ROW"):
        return -1
    closer = "GT" if opener == "LT" else "R_PAREN"
    depth = 0
    for j in range(i + 1, len(tokens)):
        name = tokens[j].token_type.name
        if name == opener:
            depth += 1
        elif name == closer:
            depth -= 1
            if depth == 0:
                return j
    return -1


def _angled(text: str, tokens: list[Any]) -> str:
    """``ROW(a INT, b ROW(c INT))`` written as ``ROW<a INT, b ROW<c INT>>`` (Flink takes both)."""
    out = list(text)
    for i, t in enumerate(tokens):
        if t.text.upper() == "ROW" and i + 1 < len(tokens) and tokens[i + 1].token_type.name == "L_PAREN":
            end = _type_end(tokens, i)
            if end > 0:
                out[tokens[i + 1].start] = "<"
                out[tokens[end].start] = ">"
    return "".join(out)


def cut_row_types(text: str, tokens: list[Any]) -> tuple[str, dict[str, str]]:
    """CREATE TABLE's column types that hold a ROW: each replaced by :data:`ROW_STAND_IN` and
    blanks (positions and line breaks hold: every such type opens with at least four characters
    on its first line, ``ROW<``), returned by column name with angle brackets."""
    if len(tokens) < 4 or tokens[0].text.upper() != "CREATE" or tokens[1].token_type.name != "TABLE":
        return text, {}
    types: dict[str, str] = {}
    cut_to = 0  # the nested fields of a type already cut out are not columns
    for i in range(3, len(tokens) - 1):
        if i <= cut_to or tokens[i - 1].token_type.name not in ("L_PAREN", "COMMA"):
            continue
        end = _type_end(tokens, i + 1)
        if end < 0 or not any(t.text.upper() == "ROW" for t in tokens[i + 1 : end + 1]):
            continue
        start, stop = tokens[i + 1].start, tokens[end].end + 1
        types[tokens[i].text.strip("`")] = _angled(text, tokens[i + 1 : end + 1])[start:stop]
        blanks = "".join("\n" if c == "\n" else " " for c in text[start:stop])  # line breaks stay
        text = text[:start] + ROW_STAND_IN + blanks[len(ROW_STAND_IN) :] + text[stop:]
        cut_to = end
    return text, types


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
