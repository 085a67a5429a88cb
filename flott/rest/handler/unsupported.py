"""Routes of Flink's REST API that flott does not serve yet: each answers 501 saying why.

They are registered (not left to the 404 fallback) so a Flink client or the
web UI gets a clear "not in flott yet, because ..." rather than "Not found".
"""

from __future__ import annotations

from flott.errors import NotYetSupportedError
from flott.rest.handler.handler import Handler, HandlerRequest, RestRoute

_LOG_URL = "Log URLs (historyserver.log.*.url-pattern) are not supported by flott yet."


def unsupported(reason: str) -> Handler:
    async def handle(req: HandlerRequest) -> None:
        raise NotYetSupportedError(reason)

    return handle


def _route(method: str, path: str, reason: str, operation_id: str) -> RestRoute:
    return RestRoute(
        method,
        path,
        unsupported(reason),
        summary=f"Not served by flott yet: {reason}",
        supported=False,
        operation_id=operation_id,
    )


ROUTES = [
    _route("GET", "/jobs/{jobid}/jobmanager/log-url", _LOG_URL, "getJobManagerLogUrl"),
    _route("GET", "/jobs/{jobid}/taskmanagers/{taskmanagerid}/log-url", _LOG_URL, "getTaskManagerLogUrl"),
]
