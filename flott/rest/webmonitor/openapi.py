"""flott's own OpenAPI document, generated from the route table and the msgspec wire types.

Generated rather than copied: every route, parameter and body schema comes
from the code that serves it, so the document cannot drift from the server.
It is OpenAPI 3.1 (whose schemas are JSON Schema 2020-12, what msgspec
emits). Served at ``GET /openapi.json`` (and ``/v1/openapi.json``); not part of
Flink's API.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from flott.rest.authentication import required_role
from flott.rest.handler.handler import INT32_MAX, INT_PARAMS, RestRoute
from flott.rest.messages.common import ErrorResponseBody
from flott.rest.messages.job import JobSubmitRequestBody
from flott.rest.version import FLOTT_VERSION, REST_API_VERSION

_HEX_ID = {"type": "string", "pattern": "^[0-9a-f]{32}$"}
_PATH_PARAMS: dict[str, tuple[str, dict[str, Any]]] = {
    "jobid": ("32-character hexadecimal string value that identifies a job.", _HEX_ID),
    "vertexid": ("32-character hexadecimal string value that identifies a job vertex.", _HEX_ID),
    "triggerid": (
        "32-character hexadecimal string that identifies an asynchronous operation trigger.",
        _HEX_ID,
    ),
    "taskmanagerid": ("32-character hexadecimal string that identifies a TaskManager.", _HEX_ID),
    "datasetid": ("32-character hexadecimal string value that identifies a cluster data set.", _HEX_ID),
    "rescaleuuid": ("32-character hexadecimal string value that identifies a job rescale.", _HEX_ID),
    "applicationid": ("32-character hexadecimal string value that identifies an application.", _HEX_ID),
    "subtaskindex": ("Positive integer value that identifies a subtask.", {}),
    "attempt": ("Positive integer value that identifies an execution attempt.", {}),
    "checkpointid": ("Long value that identifies a checkpoint.", {}),
}
for _name, _hi in INT_PARAMS.items():  # the range the handlers accept (handler.int_param)
    _PATH_PARAMS[_name] = (
        _PATH_PARAMS[_name][0],
        {"type": "integer", "format": "int32" if _hi == INT32_MAX else "int64", "minimum": 0, "maximum": _hi},
    )
_REF = "#/components/schemas/{name}"
BASE64 = "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
"""Padded standard base64, the only form msgspec decodes ``bytes`` fields from (JSON Schema's
``contentEncoding`` alone is an annotation: validators and generators ignore it)."""


def _with_base64_patterns(schema: Any) -> Any:
    """``schema`` with a :data:`BASE64` pattern on every base64-encoded string."""
    if isinstance(schema, list):
        return [_with_base64_patterns(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _with_base64_patterns(v) for k, v in schema.items()}
    if out.get("contentEncoding") == "base64" and "pattern" not in out:
        out["pattern"] = BASE64
    return out


def _refine(components: dict[str, Any], types: list[Any]) -> dict[str, Any]:
    """Apply each request type's ``openapi_schema`` (what its handler requires beyond what the
    decoder checks, e.g. a field Flink's message names when it is missing) to its component."""
    for tp in types:
        extra: dict[str, Any] = getattr(tp, "openapi_schema", {})
        component = components.get(getattr(tp, "__name__", ""))
        if not extra or component is None:
            continue
        for key, value in extra.items():
            if key == "properties":
                component["properties"] = {**component.get("properties", {}), **value}
            elif key == "required":
                component["required"] = sorted({*component.get("required", []), *value})
            else:
                component[key] = value
    return _with_base64_patterns(components)  # type: ignore[no-any-return]


def openapi_document(
    routes: list[RestRoute], server_url: str | None = None, bearer_auth: bool = False
) -> dict[str, Any]:
    """The OpenAPI 3.1 document describing ``routes``; with ``bearer_auth`` (REST authentication
    on) every operation requires the bearer security scheme, and names the role it needs in
    ``x-flott-role`` (:mod:`flott.rest.authentication`)."""
    types: list[Any] = [ErrorResponseBody, JobSubmitRequestBody]
    for r in routes:
        types += [t for t in (r.response_type, r.request_type) if t is not None]
    schemas, components = msgspec.json.schema_components(types, ref_template=_REF)
    components = _refine(components, types)
    schema_of = dict(zip((id(t) for t in types), schemas, strict=True))
    error = {
        "description": "Flink's error body.",
        "content": {"application/json": {"schema": schema_of[id(ErrorResponseBody)]}},
    }
    paths: dict[str, dict[str, Any]] = {}
    for r in routes:
        op: dict[str, Any] = {
            "operationId": r.operation_id or f"{r.method.lower()}{r.path}",
            "summary": r.summary,
        }
        params = [
            {
                "name": n,
                "in": "path",
                "required": True,
                "description": _PATH_PARAMS.get(n, ("", {}))[0],
                "schema": _PATH_PARAMS.get(n, ("", {"type": "string"}))[1],
            }
            for n in re.findall(r"{(\w+)}", r.path)
        ]
        params += [
            {
                "name": q.name,
                "in": "query",
                "required": q.required,
                "description": q.description,
                "schema": q.schema,
            }
            for q in r.query
        ]
        if params:
            op["parameters"] = params
        if r.file_upload and r.request_type is None:  # one file, as POST /jars/upload takes it
            op["requestBody"] = {
                "required": True,
                "content": {
                    "multipart/form-data": {
                        "schema": {
                            "type": "object",
                            "properties": {"jarfile": {"type": "string", "format": "binary"}},
                            "required": ["jarfile"],
                        }
                    }
                },
            }
        elif r.file_upload:
            op["requestBody"] = {
                "required": True,
                "content": {
                    "multipart/form-data": {
                        "schema": {
                            "type": "object",
                            "properties": {
                                "request": schema_of[id(JobSubmitRequestBody)],
                                "file": {"type": "array", "items": {"type": "string", "format": "binary"}},
                            },
                            "required": ["request"],
                        }
                    }
                },
            }
        elif r.request_type is not None:
            body_schema = schema_of[id(r.request_type)]
            name = body_schema.get("$ref", "").rsplit("/", 1)[-1]
            op["requestBody"] = {
                # A body with required fields must be sent (an absent body counts as {}).
                "required": bool(components.get(name, {}).get("required")),
                "content": {"application/json": {"schema": body_schema}},
            }
        ok: dict[str, Any] = {"description": "The request was successful."}
        if r.response_type is not None:
            ok["content"] = {"application/json": {"schema": schema_of[id(r.response_type)]}}
        op["responses"] = {
            str(r.status): ok,
            **{str(s): {**error, "description": "See the message."} for s in r.extra_statuses},
            "default": error,
        }
        if bearer_auth:
            op["x-flott-role"] = required_role(r.method, r.path).label
            op["responses"]["401"] = {**error, "description": "No valid bearer token."}
            op["responses"]["403"] = {**error, "description": "The token's role does not cover this."}
        paths.setdefault(r.path, {})[r.method.lower()] = op
    paths["/openapi.json"] = {
        "get": {
            "operationId": "getOpenApiDocument",
            "summary": "This document.",
            "responses": {
                "200": {"description": "The request was successful.", "content": {"application/json": {}}}
            },
        }
    }
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "flott JobManager REST API (Flink REST API v1 compatible)",
            "version": f"{REST_API_VERSION}/flott-{FLOTT_VERSION}",
            "license": {"name": "Apache 2.0", "identifier": "Apache-2.0"},
        },
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": components},
    }
    if bearer_auth:
        doc["components"]["securitySchemes"] = {"bearerAuth": {"type": "http", "scheme": "bearer"}}
        doc["security"] = [{"bearerAuth": []}]
    if server_url:
        doc["servers"] = [{"url": server_url}, {"url": f"{server_url}/{REST_API_VERSION}"}]
    return doc
