"""Reading a request's body with an idle deadline.

The header deadline (:mod:`flott.rest.http_protocol`) stops clients that never finish their
headers; this stops the ones that send headers and then stall in the body. The deadline is per
read, not for the whole body: a large upload over a slow link that keeps arriving is never cut
off, a body that stops arriving for ``flott.rest.body-idle-timeout`` (flott's key; default 30 s)
is answered 408 with Flink's error body and its connection closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from flott.errors import RequestBodyTimeoutError

BODY_IDLE_TIMEOUT_KEY = "flott.rest.body-idle-timeout"
DEFAULT_BODY_IDLE_TIMEOUT = "30 s"

T = TypeVar("T")


async def within_idle_timeout(read: Awaitable[T], timeout_s: float) -> T:
    """``await read`` (one read of the body), or RequestBodyTimeoutError after ``timeout_s``."""
    try:
        async with asyncio.timeout(timeout_s):
            return await read
    except TimeoutError:
        raise RequestBodyTimeoutError(
            f"Request Timeout: the request body stopped arriving (no data for {timeout_s:g} s, "
            f"{BODY_IDLE_TIMEOUT_KEY})."
        ) from None
