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

from flott.rest.fast_gets import FastGets, FastRequest
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
    fast_gets: FastGets | None = None
    """The GETs answered before aiohttp parses anything (:mod:`flott.rest.fast_gets`), or None."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._fast = self.fast_gets
        self._fast_task: asyncio.Task[None] | None = None
        self._fast_pending = b""
        self._fast_paused = False
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

    # -- the fast GETs ------------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        """This connection's bytes: answered here while they are wholly fast GETs, else (from
        then on, for the rest of the connection) parsed by aiohttp."""
        if self._fast is None:
            super().data_received(data)
            return
        transport = self.transport
        if not data or transport is None or transport.is_closing():
            return
        if self._fast_task is not None:  # still answering earlier requests: keep their order
            self._fast_pending += data
            if len(self._fast_pending) > 65536 and not self._fast_paused:
                self._fast_paused = True
                transport.pause_reading()  # a client that sends without reading the answers
            return
        requests = self._fast.parse(data)
        if requests is None:
            self._hand_over(data)
            return
        self._fast_task = self._loop.create_task(self._answer_fast(requests))

    def _hand_over(self, data: bytes) -> None:
        """From now on aiohttp has this connection, starting with ``data``."""
        self._fast = None
        if self._fast_paused:
            self._fast_paused = False
            if self.transport is not None:
                self.transport.resume_reading()
        if data:
            super().data_received(data)

    async def _answer_fast(self, requests: list[FastRequest]) -> None:
        fast = self._fast
        assert fast is not None
        loop = self._loop
        try:
            for i, request in enumerate(requests):
                body = await request.answer(request.headers)
                transport = self.transport
                if transport is None or transport.is_closing():
                    return
                if body is None:  # aiohttp answers this one (an error) and what follows
                    self._fast_task = None
                    self._hand_over(b"".join(r.raw for r in requests[i:]) + self._fast_pending)
                    self._fast_pending = b""
                    return
                self._request_count += 1
                fast.answered += 1
                if self._manager is not None:
                    self._manager.requests_count += 1
                transport.write(fast.head(len(body)))
                transport.write(body)
                if self._keepalive_timeout > 0:  # as aiohttp restarts it after each answer
                    close_time = loop.time() + self._keepalive_timeout
                    self._next_keepalive_close_time = close_time
                    if self._keepalive_handle is None:
                        self._keepalive_handle = loop.call_at(close_time, self._process_keepalive)
                await self._drain_helper()  # the answer is in the kernel's hands before the next
        except (ConnectionError, asyncio.CancelledError):
            return
        except Exception:
            log.exception("answering a GET on the fast path failed; closing the connection")
            if self.transport is not None:
                self.transport.close()
            return
        self._fast_task = None
        pending, self._fast_pending = self._fast_pending, b""
        if self._fast_paused:
            self._fast_paused = False
            if self.transport is not None:
                self.transport.resume_reading()
        if pending:
            self.data_received(pending)

    def connection_lost(self, exc: BaseException | None) -> None:
        task = getattr(self, "_fast_task", None)
        if task is not None:
            task.cancel()
            self._fast_task = None
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
    fast_gets: FastGets | None = None

    def __call__(self) -> RequestHandler:
        handler = FlinkErrorRequestHandler(self, loop=self._loop, **self._kwargs)
        handler.fast_gets = self.fast_gets
        handler.header_timeout = self.header_timeout
        handler.max_per_client = self.max_per_client
        handler.open_per_client = self.open_per_client
        return handler


class RestAppRunner(web.AppRunner):
    """An AppRunner whose connections use :class:`FlinkErrorRequestHandler`."""

    def __init__(
        self,
        app: web.Application,
        header_timeout_s: float,
        max_per_client: int,
        fast_gets: FastGets | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(app, **kwargs)
        self._header_timeout_s = header_timeout_s
        self._max_per_client = max_per_client
        self._fast_gets = fast_gets

    async def _make_server(self) -> Server:
        server = await super()._make_server()
        server.__class__ = _Server  # same object and state; only the protocol factory differs
        assert isinstance(server, _Server)
        server.header_timeout = self._header_timeout_s
        server.max_per_client = self._max_per_client
        server.fast_gets = self._fast_gets
        server.open_per_client = {}
        return server
