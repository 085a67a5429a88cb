"""Base classes of REST request and response bodies."""

from __future__ import annotations

from typing import Annotated

import msgspec

TriggerId = Annotated[
    str,
    msgspec.Meta(extra_json_schema={"pattern": "^[0-9a-f]{32}$", "description": "32 hexadecimal digits."}),
]
"""A client-chosen trigger id (handlers refuse any other shape with Flink's message, so the decoder
does not check it; the schema says it)."""


class ResponseBody(msgspec.Struct, frozen=True, kw_only=True):
    """A JSON response body; subclasses name each field as Flink does."""


class RequestBody(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A JSON request body. Unknown fields are an error, as with Flink's strict request mapper."""


class EmptyResponseBody(ResponseBody, frozen=True, kw_only=True):
    """``{}``: what Flink answers for cancel, DELETE /cluster and other body-less successes."""


class EmptyRequestBody(RequestBody, frozen=True, kw_only=True):
    """``{}``: the body Flink's CLI sends with every GET."""
