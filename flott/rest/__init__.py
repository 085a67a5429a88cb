"""flott's REST endpoint: Flink's REST API v1 (same paths, JSON field names, status codes, error body).

:class:`RestServerEndpoint` (Flink: WebMonitorEndpoint on a RestServerEndpoint)
serves it on aiohttp; handlers reach the cluster only through the
Dispatcher's gateway. Wire types live in :mod:`flott.rest.messages`, handlers
in :mod:`flott.rest.handler`, the error mapping in :mod:`flott.rest.errors`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flott.rest.rest_server_endpoint import RestServerEndpoint

__all__ = ["RestServerEndpoint"]


def __getattr__(name: str) -> Any:
    # Lazy: importing a light submodule (errors, messages, version), as the REST
    # client and the CLI do, must not pull in the server (aiohttp, handlers, gateways).
    if name == "RestServerEndpoint":
        from flott.rest.rest_server_endpoint import RestServerEndpoint

        return RestServerEndpoint
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
