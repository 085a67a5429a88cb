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

from flott.errors import (  # noqa: F401 - the REST layer's errors keep their import path here
    LEADER_ELECTION_MESSAGE,
    FlottError,
    NoLeaderError,
    RestMethodNotAllowedError,
    RestNotFoundError,
    RestRequestError,
    TerminationModeRemovedError,
)
from flott.rest.messages.common import ErrorResponseBody

log = logging.getLogger(__name__)



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
