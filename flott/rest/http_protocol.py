"""The HTTP layer under the REST handlers: Flink's error body for what aiohttp rejects itself, and
no connection held open by a client that never finishes its request headers.

aiohttp answers a request it cannot parse (a 70 KB URL, a NUL in the path, broken chunking, a
bad header) before any route runs: by default with ``text/plain`` and a full traceback in the
log for every such request, so anyone who can reach the port can flood the log. Here those
answers are Flink's ``{"errors": [...]}`` with the same status, and each rejected request is one
log line.

A connection whose first request's headers are not complete within
``flott.rest.header-timeout`` (flott's key; default 10 s) is closed: 400 half-sent requests
used to be held open for as long as the client liked. Idle keep-alive connections are closed by
aiohttp's keep-alive timeout as before. One client address may hold at most
``flott.rest.max-connections-per-client`` (flott's key; default 512) connections at a time;
more are closed at once, so one client cannot use up the process's file descriptors.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import msgspec
from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest
from aiohttp.web_server import Server

from flott.rest.messages.common import ErrorResponseBody

log = logging.getLogger(__name__)

HEADER_TIMEOUT_KEY = "flott.rest.header-timeout"
MAX_CONNECTIONS_PER_CLIENT_KEY = "flott.rest.max-connections-per-client"
_JSON = "application/json; charset=UTF-8"


def _reason(exc: BaseException | None, message: str | None) -> str:
    text = message or (getattr(exc, "message", None) if exc is not None else None) or str(exc or "")
    text = " ".join(str(text).split())
    return text[:300] + ("..." if len(text) > 300 else "")


class FlinkErrorRequestHandler(RequestHandler):
    """aiohttp's protocol, with Flink's error body, one log line per rejected request, and a
    deadline for the first request's headers."""

    header_timeout: float = 10.0
    max_per_client: int = 512
    open_per_client: dict[str, int] = {}
    """Shared by one server's connections (set per server by :class:`_Server`)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        self._client: str | None = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        client = self._client or "?"
        count = self.open_per_client.get(client, 0) + 1
        self.open_per_client[client] = count
        self._header_deadline: asyncio.TimerHandle | None = None
        if count > self.max_per_client:
            log.warning(
                "closing a connection from %s: it already holds %d (%s)",
                self._client, self.max_per_client, MAX_CONNECTIONS_PER_CLIENT_KEY,
            )  # fmt: skip
            transport.close()
            return
        loop = asyncio.get_running_loop()
        self._header_deadline = loop.call_later(self.header_timeout, self._headers_overdue)

    def connection_lost(self, exc: BaseException | None) -> None:
        deadline = getattr(self, "_header_deadline", None)
        if deadline is not None:
            deadline.cancel()
        client = getattr(self, "_client", None)
        if client is not None:
            left = self.open_per_client.get(client, 1) - 1
            if left > 0:
                self.open_per_client[client] = left
            else:
                self.open_per_client.pop(client, None)
            self._client = None
        super().connection_lost(exc)

    def _headers_overdue(self) -> None:
        self._header_deadline = None
        transport = self.transport
        if self._request_count == 0 and transport is not None and not transport.is_closing():
            peer = transport.get_extra_info("peername")
            log.warning(
                "closing a connection from %s: no complete request headers within %.0f s (%s)",
                peer, self.header_timeout, HEADER_TIMEOUT_KEY,
            )  # fmt: skip
            transport.close()

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if request.writer.output_size > 0:
            raise ConnectionError("Response is sent already, cannot send another response with the error")
        if status >= 500:
            errors = ["Internal server error."]
            log.error("HTTP %d for a request from %s: %s", status, request.remote, _reason(exc, message))
        else:
            reason = _reason(exc, message) or f"HTTP {status}"
            errors = [f"Bad request: {reason}"]
            log.info("rejected a malformed HTTP request from %s (%d): %s", request.remote, status, reason)
        body = msgspec.json.encode(ErrorResponseBody(errors=errors))
        resp = web.Response(status=status, body=body, headers={"Content-Type": _JSON})
        resp.force_close()
        return resp


class _Server(Server):
    header_timeout = 10.0
    max_per_client = 512
    open_per_client: dict[str, int]

    def __call__(self) -> RequestHandler:
        handler = FlinkErrorRequestHandler(self, loop=self._loop, **self._kwargs)
        handler.header_timeout = self.header_timeout
        handler.max_per_client = self.max_per_client
        handler.open_per_client = self.open_per_client
        return handler


class RestAppRunner(web.AppRunner):
    """An AppRunner whose connections use :class:`FlinkErrorRequestHandler`."""

    def __init__(
        self, app: web.Application, header_timeout_s: float, max_per_client: int, **kwargs: Any
    ) -> None:
        super().__init__(app, **kwargs)
        self._header_timeout_s = header_timeout_s
        self._max_per_client = max_per_client

    async def _make_server(self) -> Server:
        server = await super()._make_server()
        server.__class__ = _Server  # same object and state; only the protocol factory differs
        assert isinstance(server, _Server)
        server.header_timeout = self._header_timeout_s
        server.max_per_client = self._max_per_client
        server.open_per_client = {}
        return server
