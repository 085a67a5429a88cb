"""flott's REST endpoint: Flink's REST API v1 (same paths, JSON field names, status codes, error body).

:class:`RestServerEndpoint` (Flink: WebMonitorEndpoint on a RestServerEndpoint)
serves it on aiohttp; handlers reach the cluster only through the
Dispatcher's gateway. Wire types live in :mod:`flott.rest.messages`, handlers
in :mod:`flott.rest.handler`, the error mapping in :mod:`flott.rest.errors`.
"""

from __future__ import annotations

from flott.rest.rest_server_endpoint import RestServerEndpoint

__all__ = ["RestServerEndpoint"]
