"""The hottest GETs (``/overview``, ``/jobs/overview``) answered without aiohttp's per-request
machinery, everything else left to aiohttp.

Dashboards and monitoring poll these two URLs; with many jobs ``/jobs/overview`` is hundreds of
kilobytes, and a profile of the JobManager under wrk has most of each request in aiohttp's
request and response objects, its router and its writer's drain. Here a connection's bytes are
looked at before aiohttp parses them: when they are, exactly, one or more complete requests of
the strict form below, each is answered by writing the status line, the headers and the body
the endpoint's own handler renders (the same bytes aiohttp would send: same status, headers in
the same order, same body, shared with the aiohttp path through
:mod:`flott.rest.handler.shared_answers`). Anything else, from the first byte that is not such a
request on, goes to aiohttp for the rest of the connection, so every request that is not plainly
one of these GETs (a partial request, one byte at a time, a query string, a body, a malformed
line, oversized or odd headers, ``Connection: close``, HTTP/1.0) meets aiohttp's parser, its
limits and flott's header deadline exactly as before. A request the handler or the browser
checks refuse is handed to aiohttp too, which answers it (the same check fails the same way).

The strict form: ``GET <one of the paths> HTTP/1.1``, at most :data:`MAX_HEADERS` header lines of
at most :data:`MAX_LINE` bytes each, every name a token, every value visible ASCII with spaces
and tabs, no name twice, no ``Content-Length``, ``Transfer-Encoding``, ``Upgrade``, ``Expect``,
``TE`` or ``Trailer``, and ``Connection`` only as ``keep-alive``. These limits are under
aiohttp's (8190-byte lines, 128 headers), so nothing it would refuse is answered here.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from aiohttp.helpers import rfc822_formatted_time
from aiohttp.http import SERVER_SOFTWARE
from multidict import CIMultiDict, CIMultiDictProxy

MAX_LINE = 4096
MAX_HEADERS = 64
MAX_BATCH = 65536
"""The most bytes one read may hold to be looked at here (more goes to aiohttp)."""

_HEADER_LINE = re.compile(rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*([\x20-\x7e\t]*?)[ \t]*")
_REFUSED = frozenset({b"content-length", b"transfer-encoding", b"upgrade", b"expect", b"te", b"trailer"})

Answer = Callable[[CIMultiDictProxy[str]], Awaitable[bytes | None]]
"""A route's fast answer: the body for these request headers, or None (let aiohttp answer)."""


class FastRequest:
    """One parsed request: its raw bytes (to hand to aiohttp if need be), its answer, headers."""

    __slots__ = ("answer", "headers", "raw")

    def __init__(self, raw: bytes, answer: Answer, headers: CIMultiDictProxy[str]) -> None:
        self.raw, self.answer, self.headers = raw, answer, headers


class FastGets:
    """The request lines answered here and how; the response head as aiohttp writes it."""

    def __init__(self, response_headers: CIMultiDict[str]) -> None:
        self._routes: dict[bytes, Answer] = {}
        self.answered = 0
        """Requests answered here (tests check that the fast path did the answering)."""
        self._head_start = b"HTTP/1.1 200 OK\r\n" + b"".join(
            f"{k}: {v}\r\n".encode("latin-1") for k, v in response_headers.items()
        )
        self._tail = f"\r\nServer: {SERVER_SOFTWARE}\r\n\r\n".encode("latin-1")

    def add(self, path: str, answer: Answer) -> None:
        self._routes[f"GET {path} HTTP/1.1".encode("ascii")] = answer

    def head(self, body_length: int) -> bytes:
        """Status line and headers: the endpoint's headers, Content-Length, Date, Server (aiohttp's
        order and values)."""
        return b"%sContent-Length: %d\r\nDate: %s%s" % (
            self._head_start,
            body_length,
            rfc822_formatted_time().encode("ascii"),
            self._tail,
        )

    def parse(self, data: bytes) -> list[FastRequest] | None:
        """The requests ``data`` consists of, or None if it is not wholly such requests."""
        if len(data) > MAX_BATCH or not data.endswith(b"\r\n\r\n"):
            return None
        out: list[FastRequest] = []
        routes = self._routes
        for block in data[:-4].split(b"\r\n\r\n"):
            lines = block.split(b"\r\n")
            answer = routes.get(lines[0])
            if answer is None or len(lines) > MAX_HEADERS + 1:
                return None
            pairs: list[tuple[str, str]] = []
            seen: set[bytes] = set()
            for line in lines[1:]:
                m = _HEADER_LINE.fullmatch(line) if len(line) <= MAX_LINE else None
                if m is None:
                    return None
                name = m.group(1).lower()
                if name in seen or name in _REFUSED:
                    return None
                value = m.group(2)
                if name == b"connection" and value.lower() != b"keep-alive":
                    return None
                seen.add(name)
                pairs.append((m.group(1).decode("ascii"), value.decode("ascii")))
            out.append(FastRequest(block + b"\r\n\r\n", answer, CIMultiDictProxy(CIMultiDict(pairs))))
        return out
