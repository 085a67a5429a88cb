"""Flink's OpenAPI spec (a test fixture, copied byte-for-byte from the shared reference) as a validator.

Flink's generated spec is wrong for a few wire shapes (its own README and
FLINK-REST-API.md §10 list them: custom Jackson serializers, hex-string ids
shown as objects, bare-array metric bodies). ``WIRE_CORRECTIONS`` replaces
exactly those schemas with what Flink really sends, and each entry says why;
everything else is validated against the spec as published.

Besides schema validity, :func:`unknown_fields` reports response fields the
spec does not know: responses must keep to the spec's field set, because
older Java clients parse responses strictly.
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import yaml
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

WIRE_CORRECTIONS: dict[str, tuple[str, dict[str, Any]]] = {
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
    for name, (_, schema) in WIRE_CORRECTIONS.items():
        doc["components"]["schemas"][name] = schema
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


def validate(instance: Any, schema: dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError unless ``instance`` fits ``schema`` (refs into the spec)."""
    root = copy.copy(schema)
    root["components"] = spec()["components"]
    OAS30Validator(root, format_checker=oas30_format_checker).validate(instance)


def unknown_fields(instance: Any, schema: dict[str, Any], where: str = "$") -> list[str]:
    """JSON paths of object fields that ``schema`` (with its refs) does not declare."""
    schema = _resolve(schema)
    out: list[str] = []
    if isinstance(instance, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key, value in instance.items():
            if props is not None and key in props:
                out += unknown_fields(value, props[key], f"{where}.{key}")
            elif isinstance(extra, dict):
                out += unknown_fields(value, extra, f"{where}.{key}")
            elif props is not None and extra is None:
                out.append(f"{where}.{key}")
        for alternative in schema.get("anyOf", []) + schema.get("oneOf", []):
            alt = _resolve(alternative)
            if alt.get("properties") and set(instance) <= set(alt["properties"]):
                return out
    elif isinstance(instance, list) and "items" in schema:
        for i, item in enumerate(instance):
            out += unknown_fields(item, schema["items"], f"{where}[{i}]")
    return out
