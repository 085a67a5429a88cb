"""The REST endpoint (Flink: RestServerEndpoint + WebMonitorEndpoint) on aiohttp.

Every route is served twice, under ``/v1/...`` (what Flink's Java client and
CLI send) and unversioned (browsers, the web UI). Handlers reach the cluster
only through the Dispatcher's gateway, obtained per request from the
provider, so an endpoint on a standby JobManager can serve by calling the
leader, and answers 503 (clients retry) while no leader is known.

Every answer is JSON with Flink's content type. Errors, including the
router's own 404/405 and aiohttp's 413, become ``{"errors": [...]}`` through
:mod:`flott.rest.errors`; no traceback ever reaches the wire. Bodies on GET
requests (Flink's CLI sends ``{}``) are ignored.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec
from aiohttp import web

from flott.configuration import Configuration
from flott.errors import ConfigurationError, FlottError, PayloadTooLargeError, RestRequestError
from flott.rest.errors import RestMethodNotAllowedError, RestNotFoundError, error_body
from flott.rest.handler.async_operations import CompletedOperationCache
from flott.rest.handler.cluster.cluster_handlers import DATASET_DELETE_CACHE
from flott.rest.handler.handler import EndpointContext, GatewayProvider, HandlerRequest, RestRoute
from flott.rest.handler.routes import all_routes
from flott.rest.openapi import openapi_document
from flott.rest.version import REST_API_VERSION
from flott.runtime.dispatcher.gateway import DispatcherGateway

log = logging.getLogger(__name__)

JSON_CONTENT_TYPE = "application/json; charset=UTF-8"
DEFAULT_MAX_CONTENT_LENGTH = 104857600
_COMMON_HEADERS = {"Access-Control-Allow-Origin": "*"}


def json_response(status: int, body: Any) -> web.Response:
    payload = b"{}" if body is None else msgspec.json.encode(body)
    return web.Response(
        body=payload, status=status, headers={"Content-Type": JSON_CONTENT_TYPE, **_COMMON_HEADERS}
    )


def _error_response(err: BaseException) -> web.Response:
    status, payload = error_body(err)
    resp = web.Response(
        body=payload, status=status, headers={"Content-Type": JSON_CONTENT_TYPE, **_COMMON_HEADERS}
    )
    if isinstance(err, PayloadTooLargeError):
        resp.force_close()  # do not read the rest of an oversized upload on this connection
    return resp


def _from_http_exception(request: web.Request, exc: web.HTTPException, max_content_length: int) -> FlottError:
    if exc.status == 404:
        return RestNotFoundError(f"Not found: {request.raw_path}")
    if exc.status == 405:
        allowed = sorted(getattr(exc, "allowed_methods", set()) - {"HEAD"})
        return RestMethodNotAllowedError(
            f"Method {request.method} is not allowed for {request.path}"
            + (f"; allowed: {', '.join(allowed)}" if allowed else "")
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
        self, config: Configuration, dispatcher_gateway_provider: GatewayProvider | DispatcherGateway
    ) -> None:
        self.config = config
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
        self.host = ""
        self.port = 0

    @property
    def rest_base_url(self) -> str:
        """``http://<rest.address>:<port>`` once started (the address clients should use)."""
        return f"http://{self.config.get('rest.address')}:{self.port}"

    async def start(self) -> tuple[str, int]:
        """Bind and serve; returns the bound (host, port)."""
        max_len = self.config.get_int("rest.server.max-content-length", DEFAULT_MAX_CONTENT_LENGTH)
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
            extras={DATASET_DELETE_CACHE: CompletedOperationCache[None](store_s)},
        )
        app = web.Application(client_max_size=max_len, middlewares=[self._error_middleware(max_len)])
        for route in self.routes:
            handler = self._wrap(route, ctx)
            for prefix in (f"/{REST_API_VERSION}", ""):
                app.router.add_route(route.method, prefix + route.path, handler)
        for prefix in (f"/{REST_API_VERSION}", ""):
            app.router.add_route("GET", f"{prefix}/openapi.json", self._openapi)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)
        await self._runner.setup()
        host = self.config.get("rest.bind-address")
        last_error: OSError | None = None
        for port in _bind_ports(self.config):
            site = web.TCPSite(self._runner, host, port)
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

    @staticmethod
    def _wrap(
        route: RestRoute, ctx: EndpointContext
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            req = HandlerRequest(request, ctx, route)
            req.check_path_params()
            body = await route.handler(req)
            return json_response(route.status, body)

        handle.__name__ = route.operation_id or route.handler.__name__
        return handle

    @staticmethod
    def _error_middleware(max_len: int) -> Any:
        @web.middleware
        async def middleware(
            request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
        ) -> web.StreamResponse:
            try:
                return await handler(request)
            except asyncio.CancelledError:
                raise
            except web.HTTPException as e:
                return _error_response(_from_http_exception(request, e, max_len))
            except Exception as e:
                return _error_response(e)

        return middleware

    async def _openapi(self, request: web.Request) -> web.StreamResponse:
        return json_response(200, openapi_document(self.routes, f"http://{request.host}"))
