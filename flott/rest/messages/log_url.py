"""Message of the ``log-url`` routes."""

from __future__ import annotations

from flott.rest.messages.base import ResponseBody


class LogUrlResponse(ResponseBody, frozen=True, kw_only=True):
    url: str
