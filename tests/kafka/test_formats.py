"""JSON and CSV row formats: round trips, nulls, nested rows, parse errors, refusals."""

from __future__ import annotations

import pytest

from flott.common import Types
from flott.common.types import Row
from flott.datastream.formats.csv import CsvRowDeserializationSchema, CsvRowSerializationSchema
from flott.datastream.formats.json import JsonRowDeserializationSchema, JsonRowSerializationSchema
from flott.errors import ConfigurationError, NotYetSupportedError

ROW = Types.ROW_NAMED(
    ["id", "name", "score", "ok"], [Types.LONG(), Types.STRING(), Types.DOUBLE(), Types.BOOLEAN()]
)


def test_json_round_trip_with_nulls_and_nested_rows() -> None:
    nested = Types.ROW_NAMED(["k", "inner"], [Types.STRING(), ROW])
    ser = JsonRowSerializationSchema.builder().with_type_info(nested).build()
    de = JsonRowDeserializationSchema.builder().type_info(nested).build()
    value = Row(k="a", inner=Row(id=1, name=None, score=2.5, ok=True))
    data = ser.serialize(value)
    assert data == b'{"k":"a","inner":{"id":1,"name":null,"score":2.5,"ok":true}}'
    back = de.deserialize(data)
    assert back == value and back.inner.score == 2.5 and back.k == "a"
    assert de.get_produced_type() == nested
    assert (
        ser.serialize(("b", (2, "x", 0.0, False)))
        == b'{"k":"b","inner":{"id":2,"name":"x","score":0.0,"ok":false}}'
    )


def test_json_missing_fields_and_parse_errors() -> None:
    lenient = JsonRowDeserializationSchema.builder().type_info(ROW).build()
    assert lenient.deserialize(b'{"id": 3}') == Row(id=3, name=None, score=None, ok=None)
    strict = JsonRowDeserializationSchema.builder().type_info(ROW).fail_on_missing_field().build()
    with pytest.raises(ValueError, match="missing"):
        strict.deserialize(b'{"id": 3}')
    with pytest.raises(ValueError, match="Failed to deserialize JSON"):
        lenient.deserialize(b"{nope")
    skipping = JsonRowDeserializationSchema.builder().type_info(ROW).ignore_parse_errors().build()
    assert skipping.deserialize(b"{nope") is None
    with pytest.raises(ConfigurationError, match="both"):
        JsonRowDeserializationSchema.builder().type_info(
            ROW
        ).fail_on_missing_field().ignore_parse_errors().build()
    with pytest.raises(NotYetSupportedError, match="json_schema"):
        JsonRowDeserializationSchema.builder().json_schema("{}")
    with pytest.raises(ConfigurationError, match="row type"):
        JsonRowSerializationSchema.builder().with_type_info(Types.STRING()).build()


def test_csv_round_trip_with_quotes_delimiters_and_nulls() -> None:
    ser = CsvRowSerializationSchema.Builder(ROW).build()
    de = CsvRowDeserializationSchema.Builder(ROW).build()
    value = Row(id=7, name='say "hi", then go', score=1.5, ok=False)
    data = ser.serialize(value)
    assert data == b'7,"say ""hi"", then go",1.5,false\n'
    assert de.deserialize(data) == value
    semi = CsvRowSerializationSchema.Builder(ROW).set_field_delimiter(";").set_null_literal("NULL").build()
    assert semi.serialize(Row(id=1, name=None, score=2.0, ok=True)) == b"1;NULL;2.0;true\n"
    de_semi = (
        CsvRowDeserializationSchema.Builder(ROW).set_field_delimiter(";").set_null_literal("NULL").build()
    )
    assert de_semi.deserialize(b"1;NULL;2.0;true") == Row(id=1, name=None, score=2.0, ok=True)
    assert de.deserialize(b"2,,,") == Row(id=2, name="", score=None, ok=None)


def test_csv_parse_errors_and_refused_field_types() -> None:
    de = CsvRowDeserializationSchema.Builder(ROW).build()
    with pytest.raises(ValueError, match="Failed to deserialize CSV"):
        de.deserialize(b"x,a,1.0,true")
    with pytest.raises(ValueError, match="3 fields"):
        de.deserialize(b"1,a,1.0")
    skip = (
        CsvRowDeserializationSchema.Builder(ROW)
        .set_ignore_parse_errors(True)
        .set_allow_comments(True)
        .build()
    )
    assert skip.deserialize(b"x,a,1.0,true") is None
    assert skip.deserialize(b"# a comment") is None
    with pytest.raises(NotYetSupportedError, match="not supported"):
        CsvRowSerializationSchema.Builder(Types.ROW_NAMED(["a"], [Types.LIST(Types.INT())]))


AVRO = """{"type": "record", "name": "Order", "fields": [
  {"name": "id", "type": "long"},
  {"name": "who", "type": ["null", "string"], "default": null},
  {"name": "tags", "type": {"type": "array", "items": "string"}},
  {"name": "where", "type": {"type": "record", "name": "Place",
                             "fields": [{"name": "city", "type": "string"}]}}
]}"""


def test_avro_round_trip_with_unions_arrays_and_nested_records() -> None:
    pytest.importorskip("fastavro")
    from flott.datastream.formats.avro import AvroRowDeserializationSchema, AvroRowSerializationSchema

    ser = AvroRowSerializationSchema(avro_schema_string=AVRO)
    de = AvroRowDeserializationSchema(avro_schema_string=AVRO)
    value = Row(id=5, who=None, tags=["a", "b"], where=Row(city="Oslo"))
    data = ser.serialize(value)
    assert data[:1] == b"\x0a", "plain Avro binary (zigzag 5), no container header"
    back = de.deserialize(data)
    assert back == value and back.where.city == "Oslo" and back.tags == ["a", "b"]
    assert de.deserialize(ser.serialize((6, "me", [], ("Rome",)))).who == "me"
    with pytest.raises(ValueError, match="Failed to deserialize Avro"):
        de.deserialize(b"\x0a")
    with pytest.raises(NotYetSupportedError, match="record_class"):
        AvroRowSerializationSchema(record_class="com.example.Order")
    with pytest.raises(TypeError, match="should be specified"):
        AvroRowDeserializationSchema()
    with pytest.raises(ConfigurationError, match="invalid Avro schema"):
        AvroRowDeserializationSchema(avro_schema_string='{"type": "nope"}')
