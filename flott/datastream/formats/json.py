"""``JsonRowSerializationSchema`` / ``JsonRowDeserializationSchema``: rows as JSON objects, one per message.

Field values map as Flink's JSON format maps them: numbers, strings, booleans and null as such,
nested rows as objects, lists as arrays. ``json_schema(...)`` (deriving the row type from a JSON
schema) is refused: give the row type with ``type_info``.
"""

from __future__ import annotations

import json
from typing import Any

from flott.common.serialization import DeserializationSchema, SerializationSchema
from flott.common.typeinfo import RowTypeInfo
from flott.common.types import Row
from flott.datastream.formats._rows import make_row, row_fields, row_values
from flott.errors import ConfigurationError, NotYetSupportedError

__all__ = ["JsonRowDeserializationSchema", "JsonRowSerializationSchema"]


def _to_json(value: Any, type_info: Any) -> Any:
    if value is None:
        return None
    if isinstance(type_info, RowTypeInfo):
        names, types = list(type_info.get_field_names()), list(type_info.get_field_types())
        return {n: _to_json(v, t) for n, v, t in zip(names, row_values(value, names), types, strict=True)}
    if isinstance(value, Row):
        return value.as_dict(recursive=True)
    return value


def _from_json(value: Any, type_info: Any, fail_on_missing: bool) -> Any:
    if value is None or not isinstance(type_info, RowTypeInfo):
        return value
    names, types = list(type_info.get_field_names()), list(type_info.get_field_types())
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object for a row, got {type(value).__name__}")
    if fail_on_missing:
        missing = [n for n in names if n not in value]
        if missing:
            raise ValueError(f"fields {missing} are missing")
    return make_row(
        names, [_from_json(value.get(n), t, fail_on_missing) for n, t in zip(names, types, strict=True)]
    )


class JsonRowDeserializationSchema(DeserializationSchema):
    """A JSON object per message into a Row of the given type."""

    def __init__(
        self, type_info: Any = None, fail_on_missing_field: bool = False, ignore_parse_errors: bool = False
    ) -> None:
        super().__init__()
        row_fields(type_info, "JsonRowDeserializationSchema")
        if fail_on_missing_field and ignore_parse_errors:
            raise ConfigurationError(
                "JSON format doesn't support failOnMissingField and ignoreParseErrors are both true."
            )
        self._type_info = type_info
        self._fail_on_missing = fail_on_missing_field
        self._ignore_parse_errors = ignore_parse_errors

    @staticmethod
    def builder() -> JsonRowDeserializationSchema.Builder:
        return JsonRowDeserializationSchema.Builder()

    class Builder:
        def __init__(self) -> None:
            self._type_info: Any = None
            self._fail_on_missing_field = False
            self._ignore_parse_errors = False

        def type_info(self, type_info: Any) -> JsonRowDeserializationSchema.Builder:
            self._type_info = type_info
            return self

        def json_schema(self, json_schema: str) -> JsonRowDeserializationSchema.Builder:
            raise NotYetSupportedError(
                "JsonRowDeserializationSchema.Builder.json_schema is not supported by flott: "
                "give the row type with type_info(Types.ROW_NAMED(...))"
            )

        def fail_on_missing_field(self) -> JsonRowDeserializationSchema.Builder:
            self._fail_on_missing_field = True
            return self

        def ignore_parse_errors(self) -> JsonRowDeserializationSchema.Builder:
            self._ignore_parse_errors = True
            return self

        def build(self) -> JsonRowDeserializationSchema:
            if self._type_info is None:
                raise ConfigurationError("JsonRowDeserializationSchema: no type info (type_info)")
            return JsonRowDeserializationSchema(
                self._type_info, self._fail_on_missing_field, self._ignore_parse_errors
            )

    def get_produced_type(self) -> Any:
        return self._type_info

    def deserialize(self, message: bytes) -> Any:
        """The row, or None (the record is skipped) for bad input under ``ignore_parse_errors``."""
        try:
            return _from_json(json.loads(message), self._type_info, self._fail_on_missing)
        except (ValueError, TypeError) as e:
            if self._ignore_parse_errors:
                return None
            raise ValueError(f"Failed to deserialize JSON '{message[:200]!r}': {e}") from None


class JsonRowSerializationSchema(SerializationSchema):
    """A Row of the given type into a JSON object."""

    def __init__(self, type_info: Any = None) -> None:
        super().__init__()
        row_fields(type_info, "JsonRowSerializationSchema")
        self._type_info = type_info

    @staticmethod
    def builder() -> JsonRowSerializationSchema.Builder:
        return JsonRowSerializationSchema.Builder()

    class Builder:
        def __init__(self) -> None:
            self._type_info: Any = None

        def with_type_info(self, type_info: Any) -> JsonRowSerializationSchema.Builder:
            self._type_info = type_info
            return self

        def build(self) -> JsonRowSerializationSchema:
            if self._type_info is None:
                raise ConfigurationError("JsonRowSerializationSchema: no type info (with_type_info)")
            return JsonRowSerializationSchema(self._type_info)

    def serialize(self, element: Any) -> bytes:
        return json.dumps(_to_json(element, self._type_info), separators=(",", ":")).encode()
