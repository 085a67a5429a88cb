"""Checks schemathesis runs on every response of flott's REST endpoint (loaded through
``SCHEMATHESIS_HOOKS`` by :mod:`tests.security.test_rest_fuzzing`).

Schemathesis' own checks cover the spec (status codes, content types, schemas, ``Allow`` on 405,
refusal of schema-invalid requests, acceptance of valid ones). These add what flott promises on top:
every error is Flink's ``{"errors": [...]}`` JSON without a traceback, and a 5xx only ever comes
from an operation whose spec says it answers that (501 for what flott does not serve yet), never
as the answer to a client's mistake.
"""

from __future__ import annotations

import json
from typing import Any

import schemathesis


@schemathesis.check
def flink_error_body(ctx: Any, response: Any, case: Any) -> bool | None:
    """Every 4xx/5xx is ``{"errors": [<non-empty strings>]}`` with a JSON content type."""
    if response.status_code < 400:
        return None
    content_type = ",".join(response.headers.get("content-type", []))
    if not content_type.startswith("application/json"):
        raise AssertionError(f"error answered with content type {content_type!r}, not JSON")
    try:
        body = json.loads(response.content)
    except ValueError:
        raise AssertionError(f"error body is not JSON: {response.content[:200]!r}") from None
    errors = body.get("errors") if isinstance(body, dict) else None
    if (
        set(body) != {"errors"}
        or not isinstance(errors, list)
        or not errors
        or not all(isinstance(e, str) and e for e in errors)
    ):
        raise AssertionError(f"not Flink's error body: {body!r}")
    if any("Traceback (most recent call last)" in e for e in errors):
        raise AssertionError(f"a traceback reached the wire: {errors}")
    return None


@schemathesis.check
def no_undeclared_server_error(ctx: Any, response: Any, case: Any) -> bool | None:
    """A 5xx only where the operation declares exactly that status (flott's 501 routes)."""
    status = response.status_code
    if status < 500:
        return None
    declared = set(case.operation.definition.raw.get("responses", {}))
    if str(status) not in declared:
        raise AssertionError(f"server error {status} ({response.content[:300]!r})")
    return None
