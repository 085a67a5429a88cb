"""``CsvRowSerializationSchema`` / ``CsvRowDeserializationSchema``: rows as one CSV line per message.

Fields of basic types (strings, integers, floating point, booleans) are supported; a row type
with other fields (arrays, nested rows, dates) is refused when the schema is built.
``CsvSchema`` / ``CsvReaderFormat`` / ``CsvBulkWriters`` (file formats) are not here.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import Any

from flott.common.serialization import DeserializationSchema, SerializationSchema
from flott.datastream.formats._rows import make_row, row_fields, row_values
from flott.errors import NotYetSupportedError

__all__ = ["CsvRowDeserializationSchema", "CsvRowSerializationSchema"]

_INTEGERS = ("Byte", "Short", "Integer", "Long")
_FLOATS = ("Float", "Double")


def _parsers(type_info: Any, what: str) -> tuple[list[str], list[Callable[[str], Any]]]:
    names, types = row_fields(type_info, what)
    parsers: list[Callable[[str], Any]] = []
    for name, t in zip(names, types, strict=True):
        kind = repr(t)
        if kind == "String":
            parsers.append(str)
        elif kind in _INTEGERS:
            parsers.append(int)
        elif kind in _FLOATS:
            parsers.append(float)
        elif kind == "Boolean":
            parsers.append(_parse_bool)
        else:
            raise NotYetSupportedError(
                f"{what}: field {name!r} of type {kind} is not supported by flott's CSV format"
            )
    return names, parsers


def _parse_bool(text: str) -> bool:
    low = text.strip().lower()
    if low not in ("true", "false"):
        raise ValueError(f"not a boolean: {text!r}")
    return low == "true"


def _format(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


class CsvRowDeserializationSchema(DeserializationSchema):
    """One CSV line per message into a Row of the given type."""

    def __init__(self, type_info: Any = None, options: dict[str, Any] | None = None) -> None:
        super().__init__()
        self._type_info = type_info
        self._names, self._parsers = _parsers(type_info, "CsvRowDeserializationSchema")
        self._options: dict[str, Any] = dict(options or {})

    class Builder:
        def __init__(self, type_info: Any) -> None:
            _parsers(type_info, "CsvRowDeserializationSchema")
            self._type_info = type_info
            self._options: dict[str, Any] = {
                "delimiter": ",",
                "quotechar": '"',
                "escapechar": None,
                "null": None,
                "comments": False,
                "ignore_parse_errors": False,
            }

        def set_field_delimiter(self, delimiter: str) -> CsvRowDeserializationSchema.Builder:
            self._options["delimiter"] = delimiter
            return self

        def set_allow_comments(self, allow_comments: bool) -> CsvRowDeserializationSchema.Builder:
            self._options["comments"] = allow_comments
            return self

        def set_array_element_delimiter(self, delimiter: str) -> CsvRowDeserializationSchema.Builder:
            return self  # only arrays use it, and array fields are refused

        def set_quote_character(self, c: str) -> CsvRowDeserializationSchema.Builder:
            self._options["quotechar"] = c
            return self

        def set_escape_character(self, c: str) -> CsvRowDeserializationSchema.Builder:
            self._options["escapechar"] = c
            return self

        def set_null_literal(self, null_literal: str) -> CsvRowDeserializationSchema.Builder:
            self._options["null"] = null_literal
            return self

        def set_ignore_parse_errors(self, ignore_parse_errors: bool) -> CsvRowDeserializationSchema.Builder:
            self._options["ignore_parse_errors"] = ignore_parse_errors
            return self

        def build(self) -> CsvRowDeserializationSchema:
            return CsvRowDeserializationSchema(self._type_info, self._options)

    def get_produced_type(self) -> Any:
        return self._type_info

    def deserialize(self, message: bytes) -> Any:
        """The row; None (the record is skipped) for a comment, or bad input with ignore_parse_errors."""
        o = self._options
        text = message.decode()
        if o["comments"] and text.lstrip().startswith("#"):
            return None
        try:
            (fields,) = list(
                csv.reader(
                    [text.rstrip("\r\n")],
                    delimiter=o["delimiter"],
                    quotechar=o["quotechar"],
                    escapechar=o["escapechar"],
                )
            )
            if len(fields) != len(self._parsers):
                raise ValueError(f"{len(fields)} fields for a row of {len(self._parsers)}")
            values = [
                None if (f == "" and p is not str) or (o["null"] is not None and f == o["null"]) else p(f)
                for f, p in zip(fields, self._parsers, strict=True)
            ]
        except (ValueError, csv.Error) as e:
            if o["ignore_parse_errors"]:
                return None
            raise ValueError(f"Failed to deserialize CSV row '{text[:200]}': {e}") from None
        return make_row(self._names, values)


class CsvRowSerializationSchema(SerializationSchema):
    """A Row of the given type into one CSV line (with the line delimiter, ``\\n`` by default)."""

    def __init__(self, type_info: Any = None, options: dict[str, Any] | None = None) -> None:
        super().__init__()
        self._type_info = type_info
        self._names, _ = _parsers(type_info, "CsvRowSerializationSchema")
        self._options: dict[str, Any] = dict(options or {})

    class Builder:
        def __init__(self, type_info: Any) -> None:
            _parsers(type_info, "CsvRowSerializationSchema")
            self._type_info = type_info
            self._options: dict[str, Any] = {
                "delimiter": ",",
                "lineterminator": "\n",
                "quotechar": '"',
                "escapechar": None,
                "null": "",
            }

        def set_field_delimiter(self, c: str) -> CsvRowSerializationSchema.Builder:
            self._options["delimiter"] = c
            return self

        def set_line_delimiter(self, delimiter: str) -> CsvRowSerializationSchema.Builder:
            self._options["lineterminator"] = delimiter
            return self

        def set_array_element_delimiter(self, delimiter: str) -> CsvRowSerializationSchema.Builder:
            return self  # only arrays use it, and array fields are refused

        def disable_quote_character(self) -> CsvRowSerializationSchema.Builder:
            self._options["quotechar"] = None
            return self

        def set_quote_character(self, c: str) -> CsvRowSerializationSchema.Builder:
            self._options["quotechar"] = c
            return self

        def set_escape_character(self, c: str) -> CsvRowSerializationSchema.Builder:
            self._options["escapechar"] = c
            return self

        def set_null_literal(self, s: str) -> CsvRowSerializationSchema.Builder:
            self._options["null"] = s
            return self

        def build(self) -> CsvRowSerializationSchema:
            return CsvRowSerializationSchema(self._type_info, self._options)

    def serialize(self, element: Any) -> bytes:
        o = self._options
        out = io.StringIO()
        quoting: Any = csv.QUOTE_MINIMAL if o["quotechar"] is not None else csv.QUOTE_NONE
        writer = csv.writer(
            out,
            delimiter=o["delimiter"],
            lineterminator=o["lineterminator"],
            quotechar=o["quotechar"],
            escapechar=o["escapechar"],
            quoting=quoting,
        )
        writer.writerow([o["null"] if v is None else _format(v) for v in row_values(element, self._names)])
        return out.getvalue().encode()
