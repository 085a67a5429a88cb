"""What every REST handler gets: the route description, the request with typed accessors, the context.

A handler is ``async def handle(req: HandlerRequest) -> body``; the endpoint
encodes the body with msgspec and answers with the route's status. Handlers
raise errors of flott's tree; :mod:`flott.rest.errors` turns them into
Flink's error body. Path and query parameters are validated here, so a bad
job id is a 400 naming the parameter, never a 500 or a Dispatcher call.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from aiohttp import web

from flott.configuration import Configuration
from flott.errors import PayloadTooLargeError, RestRequestError
from flott.rest.body_reading import within_idle_timeout
from flott.rest.errors import NoLeaderError
from flott.runtime.gateways.dispatcher_gateway import DispatcherGateway

T = TypeVar("T")

GatewayProvider = Callable[[], "DispatcherGateway | Awaitable[DispatcherGateway | None] | None"]
"""Returns the leading Dispatcher's gateway, or None while no leader is known (→ 503)."""

_HEX32 = re.compile(r"^[0-9a-f]{32}$")
_INTEGER = re.compile(r"^-?[0-9]+$")
_NON_NEGATIVE = re.compile(r"^[0-9]+$")
"""ASCII digits only: ``str.isdigit`` also admits '²' (which ``int`` refuses) and '١' (read as 1)."""
HEX_ID_PARAMS = frozenset(
    {"jobid", "vertexid", "triggerid", "taskmanagerid", "datasetid", "rescaleuuid", "applicationid"}
)
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
INT_PARAMS: dict[str, int] = {"subtaskindex": INT32_MAX, "attempt": INT32_MAX, "checkpointid": INT64_MAX}
"""Integer path parameters (non-negative) and their largest value: a Java int, a Java long for
checkpoint ids, as Flink parses them (a bigger one could not be parsed there either)."""


@dataclass(frozen=True)
class QueryParam:
    """A query parameter as the OpenAPI document describes it."""

    name: str
    description: str
    schema: dict[str, Any] = field(default_factory=lambda: {"type": "string"})
    required: bool = False


@dataclass(frozen=True)
class RestRoute:
    """One operation: method + path (``{param}`` segments, as in Flink's spec) → handler.

    ``response_type``/``request_type`` are msgspec types, used for the
    OpenAPI document. ``shared=True`` (side-effect-free
    GETs whose answer depends on nothing but the URL) lets identical requests
    handled in the same event-loop iteration share one rendered answer
    (:mod:`flott.rest.handler.shared_answers`).
    """

    method: str
    path: str
    handler: Handler
    status: int = 200
    summary: str = ""
    response_type: Any = None
    request_type: Any = None
    query: tuple[QueryParam, ...] = ()
    operation_id: str = ""
    file_upload: bool = False
    shared: bool = False
    extra_statuses: tuple[int, ...] = ()
    """Error statuses the OpenAPI document declares besides the default error (e.g. the 501 of a
    route that finds the job, then says what flott does not serve yet)."""


@dataclass
class EndpointContext:
    """State the handlers share: configuration, the Dispatcher's gateway, upload dir, caches."""

    config: Configuration
    gateway_provider: GatewayProvider
    upload_dir: Path
    max_content_length: int
    body_idle_timeout_s: float = 30.0
    """``flott.rest.body-idle-timeout``: longest wait for the next bytes of a request body."""
    started_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    extras: dict[str, Any] = field(default_factory=dict)
    """Per-endpoint objects handlers keep between requests (e.g. operation caches), by name."""


class HandlerRequest:
    """The request as a handler sees it."""

    def __init__(self, request: web.Request, context: EndpointContext, route: RestRoute) -> None:
        self.request = request
        self.context = context
        self.route = route

    @property
    def config(self) -> Configuration:
        return self.context.config

    async def gateway(self) -> DispatcherGateway:
        gw = self.context.gateway_provider()
        # The type, not the object: a gateway proxy answers any attribute lookup.
        if hasattr(type(gw), "__await__"):
            gw = await gw  # type: ignore[misc]
        if gw is None:
            raise NoLeaderError()
        return gw  # type: ignore[return-value]

    # -- path parameters -----------------------------------------------------------------------

    def check_path_params(self) -> None:
        """Validate every path parameter before the handler runs (a bad one is a 400, as in Flink)."""
        for name in self.request.match_info:
            if name in HEX_ID_PARAMS:
                self.hex_id(name)
            elif name in INT_PARAMS:
                self.int_param(name)

    def path_param(self, name: str) -> str:
        return self.request.match_info[name]

    def hex_id(self, name: str) -> str:
        value = self.path_param(name)
        if not _HEX32.match(value):
            raise RestRequestError(
                f"Bad request, could not parse parameters: {name} must be a 32-character hexadecimal "
                f"string, got {value!r}."
            )
        return value

    def job_id(self) -> str:
        return self.hex_id("jobid")

    def vertex_id(self) -> str:
        return self.hex_id("vertexid")

    def trigger_id(self) -> str:
        return self.hex_id("triggerid")

    def int_param(self, name: str) -> int:
        value = self.path_param(name)
        hi = INT_PARAMS.get(name, INT32_MAX)
        if not _NON_NEGATIVE.match(value) or int(value) > hi:
            raise RestRequestError(
                f"Bad request, could not parse parameters: {name} must be a non-negative integer of at "
                f"most {hi}, got {value!r}."
            )
        return int(value)

    # -- query parameters ----------------------------------------------------------------------

    def query(self, name: str) -> str | None:
        values = self.request.query.getall(name, [])
        return ",".join(values) if values else None

    def query_list(self, name: str) -> list[str]:
        """A list parameter: comma-separated and/or repeated (``?get=a,b&get=c``)."""
        out: list[str] = []
        for value in self.request.query.getall(name, []):
            out.extend(v.strip() for v in value.split(",") if v.strip())
        return out

    def query_bool(self, name: str) -> bool | None:
        """A boolean query parameter: ``true`` or ``false`` (any case); anything else is a 400."""
        value = self.query(name)
        if value is None:
            return None
        if value.lower() not in ("true", "false"):
            raise RestRequestError(
                f"Bad request, could not parse parameters: query parameter {name} must be true or "
                f"false, got {value!r}."
            )
        return value.lower() == "true"

    def query_int(self, name: str, lo: int | None = None, hi: int | None = None) -> int | None:
        """An integer query parameter; outside ``[lo, hi]`` (a Java int's range, say) it is a 400."""
        value = self.query(name)
        if value is None:
            return None
        number = int(value) if _INTEGER.match(value.strip()) else None
        if number is None or (lo is not None and number < lo) or (hi is not None and number > hi):
            bounds = f" between {lo} and {hi}" if lo is not None and hi is not None else ""
            raise RestRequestError(
                f"Bad request, could not parse parameters: query parameter {name} must be an "
                f"integer{bounds}, got {value!r}."
            )
        return number

    # -- body ----------------------------------------------------------------------------------

    async def body(self, tp: type[T], name: str | None = None) -> T:
        """The JSON body as ``tp``, strictly (unknown fields, wrong types, null primitives → 400).

        An empty body counts as ``{}``, as in Flink.
        """
        raw = await read_body(self.request, self.context.body_idle_timeout_s, self.context.max_content_length)
        if not raw.strip():
            raw = b"{}"
        try:
            return msgspec.json.decode(raw, type=tp)
        except (msgspec.ValidationError, msgspec.DecodeError) as e:
            raise RestRequestError(
                f"Request did not match expected format {name or getattr(tp, '__name__', 'body')}. ({e})"
            ) from None


async def read_body(request: web.Request, idle_timeout_s: float, limit: int) -> bytes:
    """The whole body, each read within the idle deadline, at most ``limit`` bytes (else 413)."""
    data = bytearray()
    while chunk := await within_idle_timeout(request.content.readany(), idle_timeout_s):
        data += chunk
        if len(data) > limit:
            raise PayloadTooLargeError(
                f"Request entity too large: the request exceeds the maximum content length of {limit} "
                "bytes (rest.server.max-content-length)."
            )
    return bytes(data)


Handler = Callable[[HandlerRequest], Awaitable[Any]]


def now_ms() -> int:
    return int(time.time() * 1000)
