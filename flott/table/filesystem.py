"""The filesystem table connector's row formats (csv, json) as Flink writes and reads them.

Writing goes through the DataStream ``FileSink`` (row format, files in the table's path itself):
every row becomes one line, rendered here the way Flink's Jackson-based formats render it, so the
files match what PyFlink writes:

* csv: numbers unquoted (DOUBLE as Java's ``Double.toString``, DECIMAL with trailing zeros
  stripped), a string field quoted (quotes doubled) when it holds a character below ``-``
  (space, comma, quote...; Jackson's loose quoting check), NULL as ``csv.null-literal`` (empty by
  default), timestamps in SQL form (``2020-01-01 10:00:00.123``, fraction without trailing zeros);
* json: one compact object per line, ``null`` for NULL, the same number and time renderings.

Reading json parses each line's object by column name (a missing field is NULL).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
import os
import re
from collections.abc import Iterator
from typing import Any

from flott.common.java_text import java_double_to_string
from flott.datastream.functions import FilterFunction, FlatMapFunction, MapFunction
from flott.errors import NotYetSupportedError
from flott.table.runtime import _csv_value

__all__ = [
    "CsvLineFormat",
    "JsonLineFormat",
    "JsonRowParser",
    "PartitionedLine",
    "ProjectedLine",
    "partitions",
]

DEFAULT_PARTITION = "__DEFAULT_PARTITION__"
"""The directory name of a NULL (or empty) partition value (Flink's ``partition.default-name``)."""

_ESCAPED = set('"#%\'*/:=?\\\x7f{[]^') | {chr(c) for c in range(1, 32)}


def escape_partition(text: str) -> str:
    """A partition value as a path segment: Flink escapes ``/ = : % ...`` and control characters
    as ``%XX``."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


def unescape_partition(text: str) -> str:
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def partitions(path: str, keys: list[str]) -> list[tuple[str, tuple[str | None, ...]]]:
    """The partition directories under ``path`` (``k1=v1/k2=v2``, hidden ones skipped) with their
    values as text (None for the default partition), in path order."""
    found: list[tuple[str, tuple[str | None, ...]]] = []

    def walk(directory: str, depth: int, values: tuple[str | None, ...]) -> None:
        if depth == len(keys):
            found.append((directory, values))
            return
        prefix = keys[depth] + "="
        for name in sorted(os.listdir(directory)):
            full = os.path.join(directory, name)
            if name.startswith(prefix) and os.path.isdir(full):
                raw = unescape_partition(name[len(prefix) :])
                walk(full, depth + 1, (*values, None if raw == DEFAULT_PARTITION else raw))

    if os.path.isdir(path):
        walk(path, 0, ())
    return found


class ProjectedLine(MapFunction):
    """The line of the row's non-partition columns (an unpartitioned table: all of them)."""

    def __init__(self, fmt: Any, data: list[int]) -> None:
        self.fmt, self.data = fmt, data

    def map(self, value: Any) -> Any:
        vals = value[1]
        return self.fmt.map((value[0], tuple(vals[i] for i in self.data)))


class PartitionedLine(MapFunction):
    """``(partition directory, line)``: the FileSink's ElementBucketAssigner puts the line there."""

    def __init__(self, fmt: Any, keys: list[int], data: list[int], key_names: list[str]) -> None:
        self.fmt, self.keys, self.data, self.key_names = fmt, keys, data, key_names

    def map(self, value: Any) -> Any:
        vals = value[1]
        segments = []
        for name, i in zip(self.key_names, self.keys, strict=True):
            v = vals[i]
            text = DEFAULT_PARTITION if v is None or str(v) == "" else escape_partition(_partition_text(v))
            segments.append(f"{name}={text}")
        return ("/".join(segments), self.fmt.map((value[0], tuple(vals[i] for i in self.data))))


def _partition_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return java_double_to_string(v)
    return str(v)


class _Never(FilterFunction):
    """Drops every row (the scan of a partitioned table without partitions yet)."""

    def filter(self, value: Any) -> bool:
        return False


def _fraction(micros: int) -> str:
    if micros == 0:
        return ""
    return "." + f"{micros:06d}".rstrip("0")


def _scalar(t: Any, v: Any) -> Any:
    """The value as Flink's formats render it: a Python number (written unquoted) or a string."""
    root = t.type_root
    if root in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "BOOLEAN"):
        return v
    if root in ("FLOAT", "DOUBLE"):
        return _Raw(java_double_to_string(float(v)))
    if root == "DECIMAL":
        d = decimal.Decimal(v).normalize()
        return _Raw(str(d))
    if root in ("CHAR", "VARCHAR"):
        return str(v)
    if root == "DATE":
        return v.isoformat()
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE",) and isinstance(v, _dt.datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S") + _fraction(v.microsecond)
    if root == "TIME_WITHOUT_TIME_ZONE" and isinstance(v, _dt.time):
        return v.strftime("%H:%M:%S") + _fraction(v.microsecond)
    raise NotYetSupportedError(f"the filesystem connector does not yet write values of type {t}")


class _Raw(str):
    """Text written as it is (a number's Java rendering), never quoted."""


def _csv_field(text: Any, null_literal: str) -> str:
    if text is None:
        return null_literal
    if isinstance(text, bool):
        return "true" if text else "false"
    if isinstance(text, (int, _Raw)):
        return str(text)
    s = str(text)
    if any(c < "-" for c in s):
        return '"' + s.replace('"', '""') + '"'
    return s


class CsvLineFormat(MapFunction):
    """A table row ``(kind, values)`` to its csv line (Flink's csv format, ``,`` by default)."""

    def __init__(self, types: list[Any], delimiter: str, null_literal: str) -> None:
        self.types, self.delimiter, self.null_literal = types, delimiter, null_literal

    def map(self, value: Any) -> Any:
        vals = value[1]
        return self.delimiter.join(
            _csv_field(None if v is None else _scalar(t, v), self.null_literal)
            for t, v in zip(self.types, vals, strict=True)
        )


def _nested_json(t: Any, v: Any) -> str:
    """A ROW, ARRAY or MAP value as Flink's json format writes it (a ROW as an object by field
    name), scalars inside as at the top level."""
    if v is None:
        return "null"
    root = t.type_root
    if root == "ROW":
        fields = zip(t.fields, v, strict=True)
        return "{" + ",".join(f"{json.dumps(f.name)}:{_nested_json(f.data_type, x)}" for f, x in fields) + "}"
    if root == "ARRAY":
        return "[" + ",".join(_nested_json(t.element_type, x) for x in v) + "]"
    if root == "MAP":
        items = v.items()
        return "{" + ",".join(
            json.dumps(str(k)) + ":" + _nested_json(t.value_type, x) for k, x in items
        ) + "}"
    return _json_text(_scalar(t, v))


def _json_text(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, _Raw)):
        return str(v)
    return json.dumps(v, ensure_ascii=False)


class JsonLineFormat(MapFunction):
    """A table row to its json line: ``{"id":1,"name":null}`` (Flink's json format)."""

    def __init__(self, names: list[str], types: list[Any]) -> None:
        self.names, self.types = names, types

    def map(self, value: Any) -> Any:
        vals = value[1]
        columns = zip(self.names, self.types, vals, strict=True)
        parts = [json.dumps(n) + ":" + _nested_json(t, v) for n, t, v in columns]
        return "{" + ",".join(parts) + "}"


class JsonRowParser(FlatMapFunction):
    """A json line to the table's row, fields by column name (absent or null: NULL)."""

    def __init__(self, names: list[str], types: list[Any], placed: tuple[tuple[int, Any], ...] = ()) -> None:
        self.names, self.types = names, types
        self.placed = placed  # partition values: (column index, value), inserted into each row

    def flat_map(self, value: Any) -> Iterator[Any]:
        line = value.strip()
        if not line:
            return
        obj = json.loads(line)
        row: list[Any] = []
        for n, t in zip(self.names, self.types, strict=True):
            row.append(_from_json(t, obj.get(n)))
        for i, pv in self.placed:
            row.insert(i, pv)
        yield (0, tuple(row))


def _from_json(t: Any, v: Any) -> Any:
    """A json value as the column's type holds it: objects become ROWs (fields by name, a missing
    one NULL) or MAPs, arrays ARRAYs, element by element."""
    if v is None:
        return None
    root = t.type_root
    if root in ("CHAR", "VARCHAR"):
        return v if isinstance(v, str) else json.dumps(v)
    if root == "ROW" and isinstance(v, dict):
        return tuple(_from_json(f.data_type, v.get(f.name)) for f in t.fields)
    if root == "ARRAY" and isinstance(v, list):
        return [_from_json(t.element_type, x) for x in v]
    if root == "MAP" and isinstance(v, dict):
        return {_from_json(t.key_type, k): _from_json(t.value_type, x) for k, x in v.items()}
    if isinstance(v, (bool, int, float)) and root in (
        "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "BOOLEAN", "FLOAT", "DOUBLE"
    ):
        return float(v) if root in ("FLOAT", "DOUBLE") else v
    if isinstance(v, (dict, list)):
        raise ValueError(f"Failed to deserialize JSON: a json {type(v).__name__} for a {t} column")
    return _csv_value(t, str(v))


def _inputs(rex: Any) -> set[int] | None:
    """The input columns an expression reads; None when it calls a UDF (not evaluated early)."""
    if rex.kind == "input":
        return {rex.index}
    if rex.kind in ("udf", "agg"):
        return None
    out: set[int] = set()
    for o in rex.operands:
        sub = _inputs(o)
        if sub is None:
            return None
        out |= sub
    return out


def _conjuncts(rex: Any) -> list[Any]:
    if rex.kind == "call" and rex.value == "and":
        return [c for o in rex.operands for c in _conjuncts(o)]
    return [rex]


def partition_filter(table: Any, condition: Any) -> Any:
    """``keep(placed) -> bool`` for a partition's ``(column index, value)`` pairs, from the
    condition's conjuncts that read partition columns only; None when there are none."""
    from flott.table.planner import calc_source  # deferred: the planner is only needed when pruning
    from flott.table.runtime import CompiledCode

    keys = {table.names.index(k) for k in table.partition_keys}
    usable = [c for c in _conjuncts(condition) if (cols := _inputs(c)) is not None and cols <= keys]
    if not usable:
        return None
    consts: list[Any] = []
    code = None
    for c in usable:
        code = c if code is None else type(c)("call", c.type, value="and", operands=[code, c])
    source = calc_source([], code, consts, [])
    fn = CompiledCode(source, consts).function()
    width = len(table.names)

    def keep(placed: list[tuple[int, Any]]) -> bool:
        row: list[Any] = [None] * width
        for i, v in placed:
            row[i] = v
        return fn(tuple(row)) is not None

    return keep
