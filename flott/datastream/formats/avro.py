"""``AvroRowSerializationSchema`` / ``AvroRowDeserializationSchema``: rows as Avro binary (fastavro).

As Flink's: each message is one datum in Avro's binary encoding, without a container header or
schema-registry prefix, written and read with the given schema. Records become Rows (field names
from the schema, nested records nested Rows), arrays lists, maps dicts, unions their branch.
``record_class`` (a generated Java class) is refused: give ``avro_schema_string``. The Avro file
formats (``AvroInputFormat``, ``AvroBulkWriters``) are not here.
"""

from __future__ import annotations

import io
import json
from typing import Any

from flott.common.serialization import DeserializationSchema, SerializationSchema
from flott.common.types import Row
from flott.datastream.formats._rows import make_row
from flott.errors import ConfigurationError, NotYetSupportedError

__all__ = ["AvroRowDeserializationSchema", "AvroRowSerializationSchema"]


def _parse(record_class: str | None, avro_schema_string: str | None, what: str) -> Any:
    if avro_schema_string is None and record_class is None:
        raise TypeError("record_class or avro_schema_string should be specified.")
    if record_class is not None:
        raise NotYetSupportedError(
            f"{what}(record_class=...) needs a generated Java class: give avro_schema_string instead"
        )
    try:
        import fastavro
    except ImportError:
        raise ConfigurationError("the Avro format needs fastavro: pip install 'flott[kafka]'") from None
    try:
        return fastavro.parse_schema(json.loads(avro_schema_string))  # type: ignore[arg-type]
    except (ValueError, fastavro.schema.SchemaParseException) as e:
        raise ConfigurationError(f"{what}: invalid Avro schema: {e}") from None


def _to_row(value: Any, schema: Any) -> Any:
    """fastavro's dicts into Rows, following the (parsed) schema."""
    if isinstance(schema, list):  # a union: the branch the value matches
        if value is None:
            return None
        records = [s for s in schema if isinstance(s, dict) and s.get("type") == "record"]
        if isinstance(value, dict) and len(records) == 1:
            return _to_row(value, records[0])
        return value
    if isinstance(schema, dict):
        kind = schema.get("type")
        if kind == "record" and isinstance(value, dict):
            fields = schema["fields"]
            return make_row(
                [f["name"] for f in fields], [_to_row(value.get(f["name"]), f["type"]) for f in fields]
            )
        if kind == "array" and isinstance(value, list):
            return [_to_row(v, schema["items"]) for v in value]
        if kind == "map" and isinstance(value, dict):
            return {k: _to_row(v, schema["values"]) for k, v in value.items()}
    return value


def _to_record(value: Any, schema: Any) -> Any:
    """Rows (or tuples, dicts) into what fastavro writes, following the (parsed) schema."""
    if isinstance(schema, list):
        if value is None:
            return None
        records = [s for s in schema if isinstance(s, dict) and s.get("type") == "record"]
        if isinstance(value, Row | tuple | dict) and len(records) == 1:
            return _to_record(value, records[0])
        return value
    if isinstance(schema, dict):
        kind = schema.get("type")
        if kind == "record":
            fields = schema["fields"]
            if isinstance(value, dict):
                items = [value.get(f["name"]) for f in fields]
            else:
                items = list(value)
                if len(items) != len(fields):
                    raise ValueError(f"a row of {len(items)} fields for an Avro record of {len(fields)}")
            return {f["name"]: _to_record(v, f["type"]) for f, v in zip(fields, items, strict=True)}
        if kind == "array":
            return [_to_record(v, schema["items"]) for v in value]
        if kind == "map":
            return {k: _to_record(v, schema["values"]) for k, v in value.items()}
    return value


class AvroRowDeserializationSchema(DeserializationSchema):
    """Avro binary into (nested) Rows."""

    def __init__(self, record_class: str | None = None, avro_schema_string: str | None = None) -> None:
        super().__init__()
        self._schema = _parse(record_class, avro_schema_string, "AvroRowDeserializationSchema")

    def deserialize(self, message: bytes) -> Any:
        import fastavro

        try:
            datum = fastavro.schemaless_reader(io.BytesIO(message), self._schema, None)
        except Exception as e:
            raise ValueError(f"Failed to deserialize Avro record: {type(e).__name__}: {e}") from None
        return _to_row(datum, self._schema)


class AvroRowSerializationSchema(SerializationSchema):
    """(Nested) Rows into Avro binary."""

    def __init__(self, record_class: str | None = None, avro_schema_string: str | None = None) -> None:
        super().__init__()
        self._schema = _parse(record_class, avro_schema_string, "AvroRowSerializationSchema")

    def serialize(self, element: Any) -> bytes:
        import fastavro

        out = io.BytesIO()
        fastavro.schemaless_writer(out, self._schema, _to_record(element, self._schema))
        return out.getvalue()
