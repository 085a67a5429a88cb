"""The REST endpoint (Flink: RestServerEndpoint + WebMonitorEndpoint) on aiohttp.

Every route is served twice, under ``/v1/...`` (what Flink's Java client and
CLI send) and unversioned (browsers, the web UI). Handlers reach the cluster
only through the Dispatcher's gateway, obtained per request from the
provider, so an endpoint on a standby JobManager can serve by calling the
leader, and answers 503 (clients retry) while no leader is known.

Every answer is JSON with Flink's content type. Browser requests are checked
(:mod:`flott.rest.browser_guard`: no CORS unless configured, foreign origins may
not change anything, DNS rebinding refused), then, when REST authentication is configured,
the bearer token against the role the route needs (:mod:`flott.rest.authentication`). Errors,
including the router's own 404/405 and aiohttp's 413, become ``{"errors": [...]}`` through
:mod:`flott.rest.errors`; no traceback ever reaches the wire. Bodies on GET
requests (Flink's CLI sends ``{}``) are ignored.

The request path is kept short because it is the endpoint's throughput: each
handler catches its own errors (an aiohttp middleware would wrap every request
in two more coroutines), unmatched URLs land on a last catch-all route that
works out 404 or 405, and the routes marked ``shared`` (``/overview``,
``/jobs/overview`` ...) render once for all identical requests handled in the
same event-loop iteration (:mod:`flott.rest.handler.shared_answers`). The web
dashboard's static files answer at ``/`` (:mod:`flott.rest.web`).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, cast

import msgspec
from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy

from flott.configuration import Configuration
from flott.errors import (
    AuthenticationError,
    ConfigurationError,
    FlottError,
    PayloadTooLargeError,
    RequestBodyTimeoutError,
    RestRequestError,
)
from flott.rest import authentication
from flott.rest.body_reading import BODY_IDLE_TIMEOUT_KEY, DEFAULT_BODY_IDLE_TIMEOUT
from flott.rest.browser_guard import BrowserGuard
from flott.rest.errors import RestMethodNotAllowedError, RestNotFoundError, error_body
from flott.rest.fast_gets import Answer, FastGets
from flott.rest.handler.cluster.cluster_handlers import DATASET_DELETE_CACHE
from flott.rest.handler.handler import EndpointContext, GatewayProvider, HandlerRequest, RestRoute
from flott.rest.handler.shared_answers import SharedAnswers
from flott.rest.http_protocol import HEADER_TIMEOUT_KEY, MAX_CONNECTIONS_PER_CLIENT_KEY, RestAppRunner
from flott.rest.version import REST_API_VERSION
from flott.rest.web import Dashboard
from flott.rest.webmonitor.openapi import openapi_document
from flott.rest.webmonitor.routes import all_routes
from flott.runtime.dispatcher.completed_operation_cache import CompletedOperationCache
from flott.runtime.gateways.dispatcher_gateway import DispatcherGateway
from flott.ssl_context import rest_scheme, rest_server_ssl

log = logging.getLogger(__name__)

JSON_CONTENT_TYPE = "application/json; charset=UTF-8"
DEFAULT_MAX_CONTENT_LENGTH = 104857600
FAST_PATHS = ("/overview", "/jobs/overview")
"""The GETs :mod:`flott.rest.fast_gets` answers ahead of aiohttp (the pollers' favourites)."""
_JSON_HEADERS = CIMultiDict({"Content-Type": JSON_CONTENT_TYPE})
_encode = msgspec.json.encode


def _render(body: Any) -> bytes:
    return b"{}" if body is None else _encode(body)


def _json_bytes_response(
    status: int, payload: bytes, headers: CIMultiDict[str] = _JSON_HEADERS
) -> web.Response:
    return web.Response(body=payload, status=status, headers=headers)


def json_response(status: int, body: Any, headers: CIMultiDict[str] = _JSON_HEADERS) -> web.Response:
    return _json_bytes_response(status, _render(body), headers)


def _with_cors(resp: web.StreamResponse, headers: CIMultiDict[str]) -> web.StreamResponse:
    """A handler's own (non-JSON) response, with the endpoint's CORS header if it sends one."""
    origin = headers.get("Access-Control-Allow-Origin")
    if origin is not None:
        resp.headers["Access-Control-Allow-Origin"] = origin
    return resp


def _error_response(err: BaseException, headers: CIMultiDict[str] = _JSON_HEADERS) -> web.Response:
    status, payload = error_body(err)
    resp = _json_bytes_response(status, payload, headers)
    if isinstance(err, RestMethodNotAllowedError):
        resp.headers["Allow"] = ", ".join(err.allowed)
    if isinstance(err, PayloadTooLargeError | RequestBodyTimeoutError):
        resp.force_close()  # do not read the rest of an oversized or stalled upload on this connection
    elif isinstance(err, AuthenticationError):
        resp.headers["WWW-Authenticate"] = authentication.www_authenticate(err)
    return resp


def _from_http_exception(request: web.Request, exc: web.HTTPException, max_content_length: int) -> FlottError:
    if exc.status == 404:
        return RestNotFoundError(f"Not found: {request.raw_path}")
    if exc.status == 405:
        allowed = sorted(getattr(exc, "allowed_methods", set()) - {"HEAD"})
        return RestMethodNotAllowedError(
            f"Method {request.method} is not allowed for {request.path}"
            + (f"; allowed: {', '.join(allowed)}" if allowed else ""),
            tuple(allowed),
        )
    if exc.status == 413:
        return PayloadTooLargeError(
            "Request entity too large: the request exceeds the maximum content length of "
            f"{max_content_length} bytes (rest.server.max-content-length)."
        )
    err = RestRequestError(exc.reason or f"HTTP {exc.status}")
    if exc.status < 500:
        return err
    return FlottError(exc.reason)


class _Unmatched(web.AbstractResource):
    """Matches every request, whatever its method and target (even ``OPTIONS *``).

    Registered after every route, the router only reaches it for requests no
    route matched; its handler works out the 404 or 405 the router would have
    answered, as Flink's error body.
    """

    def __init__(self, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> None:
        super().__init__()
        self._route = web.ResourceRoute("*", handler, self)

    @property
    def canonical(self) -> str:
        return "/"

    def url_for(self, **kwargs: str) -> Any:
        raise RuntimeError("the catch-all resource has no URL")

    async def resolve(self, request: web.Request) -> tuple[web.UrlMappingMatchInfo, set[str]]:
        return web.UrlMappingMatchInfo({}, self._route), {"*"}

    def add_prefix(self, prefix: str) -> None:
        raise RuntimeError("the catch-all resource takes no prefix")

    def get_info(self) -> Any:  # aiohttp's _InfoDict
        return {}

    def raw_match(self, path: str) -> bool:
        return False

    def __len__(self) -> int:
        return 1

    def __iter__(self) -> Iterator[web.AbstractRoute]:
        return iter([self._route])


def _bind_ports(config: Configuration) -> list[int]:
    """``rest.bind-port`` (a port, a range ``50100-50200`` or a list) or else ``rest.port``."""
    raw = config.get("rest.bind-port", config.get("rest.port"))
    ports: list[int] = []
    try:
        for item in raw.split(","):
            lo, sep, hi = item.strip().partition("-")
            ports.extend(range(int(lo), int(hi) + 1) if sep else [int(lo)])
    except ValueError:
        raise ConfigurationError(
            f"rest.bind-port / rest.port: expected a port, range or list, got {raw!r}"
        ) from None
    if not ports:
        raise ConfigurationError(f"rest.bind-port / rest.port: no port in {raw!r}")
    return ports


class RestServerEndpoint:
    """Serves Flink's REST API for a cluster whose Dispatcher the provider names.

    ``dispatcher_gateway_provider`` is a gateway, or a callable returning the
    current leader's gateway (or None while there is none; may be async).
    """

    def __init__(
        self,
        config: Configuration,
        dispatcher_gateway_provider: GatewayProvider | DispatcherGateway,
        *,
        lingering_time_s: float = 10.0,
        fast_gets: bool = True,
    ) -> None:
        """``lingering_time_s``: how long a connection answered with an error before its body was
        read keeps reading and dropping what the client still sends, so the client sees the answer
        rather than a reset (aiohttp's lingering time; tests shorten it). ``fast_gets=False``:
        every request through aiohttp (tests compare the two paths' bytes)."""
        self.config = config
        self._fast_gets = fast_gets
        self._lingering_time_s = lingering_time_s
        provider: GatewayProvider
        if callable(dispatcher_gateway_provider) and not hasattr(dispatcher_gateway_provider, "submit_job"):
            provider = dispatcher_gateway_provider
        else:
            gateway = dispatcher_gateway_provider

            def provider() -> DispatcherGateway:
                return gateway  # type: ignore[return-value]

        self._provider = provider
        self.routes: list[RestRoute] = all_routes()
        self._runner: web.AppRunner | None = None
        self._upload_root: Path | None = None
        self._context: EndpointContext | None = None
        self._no_route_resource: web.AbstractResource | None = None
        self.shared_answers = SharedAnswers()
        self.host = ""
        self.port = 0
        self._guard = BrowserGuard(config)
        self.authenticator = authentication.RestAuthenticator.from_config(config)
        self.fast_gets: FastGets | None = None
        """What answers ``GET /overview`` and ``/jobs/overview`` ahead of aiohttp, once started
        (None: ``fast_gets=False``, or authentication on: then aiohttp answers them)."""
        """The tokens this endpoint accepts, or None: authentication off."""
        self._headers: CIMultiDict[str] = CIMultiDict(_JSON_HEADERS)
        """Copied by aiohttp into each response's own headers (a C-level copy of a CIMultiDict)."""
        if self._guard.cors_origin is not None:
            self._headers["Access-Control-Allow-Origin"] = self._guard.cors_origin

    @property
    def rest_base_url(self) -> str:
        """``http(s)://<rest.address>:<port>`` once started (the address clients should use)."""
        return f"{rest_scheme(self.config)}://{self.config.get('rest.address')}:{self.port}"

    async def start(self) -> tuple[str, int]:
        """Bind and serve; returns the bound (host, port)."""
        max_len = self.config.get_int("rest.server.max-content-length", DEFAULT_MAX_CONTENT_LENGTH)
        ssl_context = rest_server_ssl(self.config)  # security.ssl.rest.*: bad files fail here, at start
        base = Path(self.config.get("web.upload.dir")) if self.config.contains("web.upload.dir") else None
        if base is not None:
            base.mkdir(parents=True, exist_ok=True)
        self._upload_root = Path(tempfile.mkdtemp(prefix=f"flott-web-{uuid.uuid4().hex[:8]}-", dir=base))
        store_s = self.config.get_seconds("rest.async.store-duration", "5 min")
        self._context = ctx = EndpointContext(
            config=self.config,
            gateway_provider=self._provider,
            upload_dir=self._upload_root / "jobs",
            max_content_length=max_len,
            body_idle_timeout_s=self.config.get_seconds(BODY_IDLE_TIMEOUT_KEY, DEFAULT_BODY_IDLE_TIMEOUT),
            extras={DATASET_DELETE_CACHE: CompletedOperationCache[None](store_s)},
        )
        app = web.Application(client_max_size=max_len)
        shared = self.shared_answers = SharedAnswers()
        for route in self.routes:
            handler = self._wrap(route, ctx, shared, max_len)
            for prefix in (f"/{REST_API_VERSION}", ""):
                app.router.add_route(route.method, prefix + route.path, handler)
        openapi = self._guarded(self._openapi, max_len, authentication.OPENAPI_ROLE)
        for prefix in (f"/{REST_API_VERSION}", ""):
            app.router.add_route("GET", f"{prefix}/openapi.json", openapi)
        for path, fn in Dashboard().routes():
            app.router.add_route("GET", path, self._guarded(fn, max_len, authentication.DASHBOARD_ROLE))
        # Last, so that it only gets what no route above matches.
        self._no_route_resource = _Unmatched(
            self._guarded(self._no_route, max_len, authentication.UNMATCHED_ROLE)
        )
        app.router.register_resource(self._no_route_resource)
        fast = self.fast_gets = None
        if self._fast_gets and self.authenticator is None:
            fast = self.fast_gets = FastGets(self._headers)
            for route in self.routes:
                if route.method == "GET" and route.path in FAST_PATHS:
                    assert route.shared and route.status == 200, route
                    for path in (f"/{REST_API_VERSION}{route.path}", route.path):
                        fast.add(path, self._fast_answer(route, ctx, shared, path))
        self._runner = RestAppRunner(
            app,
            self.config.get_seconds(HEADER_TIMEOUT_KEY, "10 s"),
            self.config.get_int(MAX_CONNECTIONS_PER_CLIENT_KEY, 512),
            fast,
            access_log=None,
            shutdown_timeout=2.0,
            lingering_time=self._lingering_time_s,
        )
        await self._runner.setup()
        host = self.config.get("rest.bind-address")
        last_error: OSError | None = None
        for port in _bind_ports(self.config):
            site = web.TCPSite(self._runner, host, port, ssl_context=ssl_context)
            try:
                await site.start()
            except OSError as e:
                last_error = e
                continue
            break
        else:
            await self.stop()
            raise ConfigurationError(
                f"cannot bind the REST endpoint to {host}:{self.config.get('rest.port')}: {last_error}"
            )
        self.host, self.port = self._runner.addresses[0][:2]
        authentication.warn_if_exposed([str(a[0]) for a in self._runner.addresses], self.authenticator)
        log.info("REST endpoint listening on %s:%d", self.host, self.port)
        return self.host, self.port

    async def stop(self) -> None:
        if self._context is not None:
            for extra in self._context.extras.values():
                if isinstance(extra, CompletedOperationCache):
                    await extra.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._upload_root is not None:
            shutil.rmtree(self._upload_root, ignore_errors=True)
            self._upload_root = None

    async def __aenter__(self) -> RestServerEndpoint:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- plumbing ------------------------------------------------------------------------------

    def _wrap(
        self, route: RestRoute, ctx: EndpointContext, shared: SharedAnswers, max_len: int
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        handler, status = route.handler, route.status
        headers = self._headers
        check = self._request_check(authentication.required_role(route.method, route.path), route.path)

        async def handle(request: web.Request) -> web.StreamResponse:
            try:
                check(request.method, request.headers)
                req = HandlerRequest(request, ctx, route)
                req.check_path_params()
                body = await handler(req)
                if isinstance(body, web.StreamResponse):  # a log file (text), not JSON
                    return _with_cors(body, headers)
                return _json_bytes_response(status, _render(body), headers)
            except web.HTTPException as e:
                return _error_response(_from_http_exception(request, e, max_len), headers)
            except Exception as e:
                return _error_response(e, headers)

        async def handle_shared(request: web.Request) -> web.StreamResponse:
            try:
                check(request.method, request.headers)
            except Exception as e:
                return _error_response(e, headers)
            key = request.raw_path
            payload = shared.get(key)
            if payload is not None:
                return _json_bytes_response(status, payload, headers)

            async def render() -> bytes:
                req = HandlerRequest(request, ctx, route)
                req.check_path_params()
                return _render(await handler(req))

            try:
                return _json_bytes_response(status, await shared.render(key, render), headers)
            except web.HTTPException as e:
                return _error_response(_from_http_exception(request, e, max_len), headers)
            except Exception as e:
                return _error_response(e, headers)

        chosen = handle_shared if route.shared else handle
        chosen.__name__ = route.operation_id or route.handler.__name__
        return chosen

    def _fast_answer(self, route: RestRoute, ctx: EndpointContext, shared: SharedAnswers, key: str) -> Answer:
        """What :mod:`flott.rest.fast_gets` answers for ``key`` (the request's path, as aiohttp's
        ``raw_path`` names it for the shared answers): the browser checks, then the same bytes as
        the aiohttp route; None whenever that route would answer an error (it then does)."""
        handler = route.handler
        check = self._request_check(authentication.required_role(route.method, route.path), route.path)

        async def render() -> bytes:
            # These routes' handlers read nothing of the request (no path or query parameters).
            return _render(await handler(HandlerRequest(cast(web.Request, None), ctx, route)))

        async def answer(request_headers: CIMultiDictProxy[str]) -> bytes | None:
            try:
                check("GET", request_headers)
                payload = shared.get(key)
                return payload if payload is not None else await shared.render(key, render)
            except Exception:
                return None

        return answer

    def _request_check(
        self, role: authentication.Role, path: str | None
    ) -> Callable[[str, CIMultiDictProxy[str]], None]:
        """What every request of a route goes through before its handler: the browser checks, then
        (authentication on) the token against ``role``. ``path`` names the route in a 403."""
        guard, auth = self._guard.check, self.authenticator
        if auth is None:
            return guard
        authorize = auth.authorize

        def check(method: str, request_headers: CIMultiDictProxy[str]) -> None:
            guard(method, request_headers)
            authorize(method, path or "this URL", request_headers, role)

        return check

    def _guarded(
        self,
        fn: Callable[[web.Request], Awaitable[web.StreamResponse]],
        max_len: int,
        role: authentication.Role,
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        """``fn`` with errors answered as Flink's error body, behind the token check for ``role``."""
        headers, check = self._headers, self._request_check(role, None)

        async def guarded(request: web.Request) -> web.StreamResponse:
            try:
                check(request.method, request.headers)
                return await fn(request)
            except web.HTTPException as e:
                return _error_response(_from_http_exception(request, e, max_len), headers)
            except Exception as e:
                return _error_response(e, headers)

        return guarded

    async def _no_route(self, request: web.Request) -> web.StreamResponse:
        """The router's own answer, as JSON: 405 if a route has the path with another method, else 404."""
        allowed: set[str] = set()
        assert self._runner is not None
        for resource in self._runner.app.router.resources():
            if resource is not self._no_route_resource:
                _, methods = await resource.resolve(request)
                allowed |= methods
        if allowed:
            raise web.HTTPMethodNotAllowed(request.method, allowed)
        raise web.HTTPNotFound()

    async def _openapi(self, request: web.Request) -> web.StreamResponse:
        with_auth = self.authenticator is not None
        doc = openapi_document(self.routes, f"{request.scheme}://{request.host}", with_auth)
        return json_response(200, doc, self._headers)
