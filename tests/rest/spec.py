"""Flink's OpenAPI spec (a test fixture, copied byte-for-byte from the shared reference) as a validator.

Flink's generated spec is wrong for a few wire shapes (its own README and
FLINK-REST-API.md §10 list them: custom Jackson serializers, hex-string ids
shown as objects, bare-array metric bodies; the checkpoint statistics add
``@Nullable`` fields written as ``null`` and a lower-case enum serializer).
``WIRE_CORRECTIONS`` replaces exactly those schemas with what Flink
really sends, and each entry says why; everything else is validated against
the spec as published. A correction is either the replacement schema or a
function that receives (a copy of) the published schema and returns it
corrected, for fixes to one or two of its properties.

The spec's ``discriminator`` (CheckpointStatistics: ``className`` is
``completed``/``failed``/``in_progress``) is honoured: an object carrying it is
checked against the subtype it names, extra fields included, as Flink's
Jackson subtype serialization writes it.

Besides schema validity, :func:`unknown_fields` reports response fields the
spec does not know: responses must keep to the spec's field set, because
older Java clients parse responses strictly.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import ValidationError, validators
from openapi_schema_validator import OAS30Validator, oas30_format_checker

FIXTURES = Path(__file__).parent / "fixtures"
SPEC_FILE = FIXTURES / "flink-rest-v1-dispatcher.yml"
SUPPLEMENT_FILE = FIXTURES / "flink-rest-v1-dispatcher-submit-job.supplement.yml"

_HEX32 = {"type": "string", "pattern": "^[0-9a-f]{32}$"}
_SERIALIZED_THROWABLE = {
    "type": "object",
    "required": ["class", "stack-trace", "serialized-throwable"],
    "properties": {
        "class": {"type": "string"},
        "stack-trace": {"type": "string"},
        "serialized-throwable": {"type": "string"},
        "message": {"type": "string"},
    },
}

# OpenAPI 3.0's ``nullable`` does not apply next to a $ref (nor does the validator honour it
# beside allOf/anyOf), so "this object or null" is spelled as an anyOf with a null branch.
_NULL = {"enum": [None]}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, _NULL]}


def _all_properties_nullable(published: dict[str, Any]) -> dict[str, Any]:
    published["properties"] = {k: _nullable(v) for k, v in published["properties"].items()}
    return published


def _nullable_savepoint_format(published: dict[str, Any]) -> dict[str, Any]:
    published["properties"]["savepointFormat"] = {"type": "string", "nullable": True}
    return published


Correction = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]

WIRE_CORRECTIONS: dict[str, tuple[str, Correction]] = {
    "ApplicationID": ("a 32-hex string on the wire; the spec shows the Java object", _HEX32),
    "SlotSharingGroupId": ("a 32-hex string on the wire; the spec shows the Java object", _HEX32),
    "SerializedThrowable": (
        "custom serializer writes class, stack-trace, serialized-throwable",
        _SERIALIZED_THROWABLE,
    ),
    "JobResult": (
        "custom serializer (JobResultSerializer): kebab-case keys, not the bean properties",
        {
            "type": "object",
            "required": ["id", "application-status", "accumulator-results", "net-runtime"],
            "properties": {
                "id": _HEX32,
                "name": {"type": "string"},
                "application-status": {
                    "type": "string",
                    "enum": ["SUCCEEDED", "FAILED", "CANCELED", "UNKNOWN"],
                },
                "accumulator-results": {"type": "object"},
                "net-runtime": {"type": "integer"},
                "failure-cause": {"$ref": "#/components/schemas/SerializedThrowable"},
                "application-id": {"type": "string"},
                "start-time": {"type": "integer"},
                "end-time": {"type": "integer"},
            },
        },
    ),
    "JobConfigInfo": (
        "custom serializer writes jid, name, execution-config",
        {
            "type": "object",
            "required": ["jid", "name"],
            "properties": {
                "jid": _HEX32,
                "name": {"type": "string"},
                "execution-config": {"$ref": "#/components/schemas/ExecutionConfigInfo"},
            },
        },
    ),
    "MetricCollectionResponseBody": (
        "a bare JSON array on the wire (custom serializer)",
        {
            "type": "array",
            "items": {"$ref": "#/components/schemas/Metric"},
        },
    ),
    "AggregatedMetricsResponseBody": (
        "a bare JSON array of {id, min, max, avg, sum, skew} on the wire",
        {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id"],
                "properties": {
                    "id": {"type": "string"},
                    "min": {"type": "number"},
                    "max": {"type": "number"},
                    "avg": {"type": "number"},
                    "sum": {"type": "number"},
                    "skew": {"type": "number"},
                },
            },
        },
    ),
    "AsynchronousOperationResult": (
        "operation is null while IN_PROGRESS (not nullable in the spec), and its "
        "oneOf cannot discriminate: {} matches all three alternatives",
        {
            "type": "object",
            "properties": {
                "status": {"$ref": "#/components/schemas/QueueStatus"},
                "operation": {
                    "nullable": True,
                    "anyOf": [
                        {"$ref": "#/components/schemas/AsynchronousOperationInfo"},
                        {"$ref": "#/components/schemas/CheckpointInfo"},
                        {"$ref": "#/components/schemas/SavepointInfo"},
                    ],
                },
            },
        },
    ),
    "LatestCheckpoints": (
        "its four fields are @Nullable in Flink and written as null until such a checkpoint "
        "exists (no completed/failed checkpoint, no savepoint, nothing restored yet)",
        _all_properties_nullable,
    ),
    "CheckpointStatistics": (
        "savepointFormat is @Nullable: null for checkpoints that are not savepoints",
        _nullable_savepoint_format,
    ),
    "ProcessingMode": (
        "CheckpointConfigInfo.ProcessingModeSerializer writes name().toLowerCase()",
        {"type": "string", "enum": ["at_least_once", "exactly_once"]},
    ),
}

ERROR_SCHEMA = {
    "type": "object",
    "required": ["errors"],
    "additionalProperties": False,
    "properties": {"errors": {"type": "array", "minItems": 1, "items": {"type": "string"}}},
}


@cache
def spec() -> dict[str, Any]:
    """Flink's spec with the POST /jobs supplement merged in and the wire corrections applied."""
    doc = yaml.safe_load(SPEC_FILE.read_text())
    supplement = yaml.safe_load(SUPPLEMENT_FILE.read_text())
    doc["paths"].setdefault("/jobs", {}).update(supplement["paths"]["/jobs"])
    doc["components"]["schemas"].update(supplement["components"]["schemas"])
    schemas = doc["components"]["schemas"]
    for name, (_, correction) in WIRE_CORRECTIONS.items():
        if callable(correction):
            schemas[name] = correction(copy.deepcopy(schemas[name]))
        else:
            schemas[name] = correction
    return doc


def operations() -> list[tuple[str, str]]:
    """Every (METHOD, path) of Flink's spec plus the supplement."""
    return sorted((m.upper(), p) for p, ops in spec()["paths"].items() for m in ops)


def response_schema(method: str, path: str, status: int) -> dict[str, Any] | None:
    responses = spec()["paths"][path][method.lower()]["responses"]
    content = responses.get(str(status), {}).get("content")
    if not content:
        return None
    return dict(next(iter(content.values()))["schema"])


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = spec()["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _subtype(instance: Any, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The subtype schema ``schema``'s discriminator names for ``instance`` (None without one)."""
    disc = schema.get("discriminator")
    if disc is None or not isinstance(instance, dict):
        return None
    target = disc.get("mapping", {}).get(instance.get(disc["propertyName"]))
    return None if target is None else _resolve({"$ref": target})


def _discriminator(
    validator: Any, disc: dict[str, Any], instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if not isinstance(instance, dict) or disc["propertyName"] not in instance:
        return
    value = instance[disc["propertyName"]]
    subtype = _subtype(instance, schema)
    if subtype is None:
        yield ValidationError(f"{disc['propertyName']}={value!r} is none of {sorted(disc['mapping'])}")
        return
    # The subtype is allOf [this schema, its own part]: check the parts other than this one.
    for part in subtype.get("allOf", []):
        if _resolve(part) != schema:
            yield from validator.descend(instance, part)


_Validator = validators.extend(OAS30Validator, {"discriminator": _discriminator})


def validate(instance: Any, schema: dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError unless ``instance`` fits ``schema`` (refs into the spec)."""
    root = copy.copy(schema)
    root["components"] = spec()["components"]
    _Validator(root, format_checker=oas30_format_checker).validate(instance)


def _is_valid(instance: Any, schema: dict[str, Any]) -> bool:
    try:
        validate(instance, schema)
    except ValidationError:
        return False
    return True


def _declared(schema: dict[str, Any]) -> tuple[dict[str, Any] | None, Any]:
    """The properties and additionalProperties of ``schema`` merged with its allOf parts."""
    props = dict(schema["properties"]) if "properties" in schema else None
    extra = schema.get("additionalProperties")
    for part in schema.get("allOf", []):
        part_props, part_extra = _declared(_resolve(part))
        if part_props is not None:
            props = {**(props or {}), **part_props}
        extra = extra if extra is not None else part_extra
    return props, extra


def unknown_fields(instance: Any, schema: dict[str, Any], where: str = "$") -> list[str]:
    """JSON paths of object fields that ``schema`` (with its refs) does not declare.

    allOf parts add their properties; a discriminator selects the subtype it names;
    of anyOf/oneOf alternatives, those the instance is valid under are tried and the
    one that knows most of its fields counts.
    """
    schema = _resolve(schema)
    subtype = _subtype(instance, schema)
    if subtype is not None:
        schema = subtype
    alternatives = schema.get("anyOf", []) + schema.get("oneOf", [])
    if alternatives and instance is not None:
        fitting = [alt for alt in alternatives if _is_valid(instance, alt)]
        if fitting:
            return min((unknown_fields(instance, alt, where) for alt in fitting), key=len)
    out: list[str] = []
    if isinstance(instance, dict):
        props, extra = _declared(schema)
        for key, value in instance.items():
            if props is not None and key in props:
                out += unknown_fields(value, props[key], f"{where}.{key}")
            elif isinstance(extra, dict):
                out += unknown_fields(value, extra, f"{where}.{key}")
            elif props is not None and extra is None:
                out.append(f"{where}.{key}")
    elif isinstance(instance, list) and "items" in schema:
        for i, item in enumerate(instance):
            out += unknown_fields(item, schema["items"], f"{where}[{i}]")
    return out
