"""Base classes of REST request and response bodies."""

from __future__ import annotations

import msgspec


class ResponseBody(msgspec.Struct, frozen=True, kw_only=True):
    """A JSON response body; subclasses name each field as Flink does."""


class RequestBody(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A JSON request body. Unknown fields are an error, as with Flink's strict request mapper."""


class EmptyResponseBody(ResponseBody, frozen=True, kw_only=True):
    """``{}``: what Flink answers for cancel, DELETE /cluster and other body-less successes."""


class EmptyRequestBody(RequestBody, frozen=True, kw_only=True):
    """``{}``: the body Flink's CLI sends with every GET."""
