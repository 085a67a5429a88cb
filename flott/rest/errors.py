"""The one place where errors become REST answers: ``{"errors": [...]}`` with the class's status.

Every :class:`~flott.errors.FlottError` carries its HTTP status
(``http_status``); this module only formats. Errors of the REST layer itself
(the request was wrong: bad path parameter, malformed body, unknown route;
no leader) answer with just their message, as Flink's
``RestHandlerException`` does, so Flink's exact texts (the leader-election
503, ``Not found: /x``) go out unchanged. Any other error of the tree
answers ``"<ClassName>: <message>"`` (Flink writes the exception's class name
first, too), so a client can match the class. Anything outside the tree is a
bug: 500 with ``"Internal server error."`` and no traceback on the wire (it
goes to the log).
"""

from __future__ import annotations

import logging

import msgspec

from flott.errors import FlottError, LeadershipLostError, RestRequestError
from flott.rest.messages.common import ErrorResponseBody

log = logging.getLogger(__name__)

LEADER_ELECTION_MESSAGE = "Service temporarily unavailable due to an ongoing leader election. Please refresh."


class RestNotFoundError(RestRequestError):
    """No such route, or no such trigger id (Flink: NOT_FOUND from the router or UnknownOperationKey)."""

    http_status = 404


class RestMethodNotAllowedError(RestRequestError):
    """The path exists, not with this method: the answer's ``Allow`` header lists the methods it has
    (RFC 9110 requires the header on every 405)."""

    http_status = 405

    def __init__(self, message: str = "", allowed: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.allowed = allowed


class TerminationModeRemovedError(RestRequestError):
    """``PATCH /jobs/:id?mode=stop``: Flink answers 308 PERMANENT_REDIRECT with this hint."""

    http_status = 308


class NoLeaderError(LeadershipLostError):
    """No Dispatcher leader is known to this REST endpoint: 503, clients retry."""

    def __init__(self, message: str = LEADER_ELECTION_MESSAGE) -> None:
        super().__init__(message)


def error_status(err: BaseException) -> int:
    return err.http_status if isinstance(err, FlottError) else 500


def error_messages(err: BaseException) -> list[str]:
    """The ``errors`` list for ``err`` (see the module docstring for the three forms)."""
    if isinstance(err, RestRequestError | NoLeaderError):
        return [err.message or type(err).__name__]
    if isinstance(err, FlottError):
        return [f"{type(err).__name__}: {err.message}"]
    return [
        "Internal server error.",
        f"<Exception on server side:\n{type(err).__name__}: {err}\nEnd of exception on server side>",
    ]


def error_body(err: BaseException) -> tuple[int, bytes]:
    """HTTP status and encoded ``ErrorResponseBody`` for ``err``; logs what is a server-side bug."""
    status = error_status(err)
    if not isinstance(err, FlottError):
        log.error("unhandled error in a REST handler", exc_info=err)
    elif status >= 500 and status not in (501, 503):
        log.warning("REST request failed with %d: %s: %s", status, type(err).__name__, err)
    return status, msgspec.json.encode(ErrorResponseBody(errors=error_messages(err)))
