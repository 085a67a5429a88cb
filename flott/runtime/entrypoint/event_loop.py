"""The event loop every flott process runs on: uvloop where it is installed.

The JobManager's REST endpoint, the RPC services and the TaskExecutor's data
exchange spend most of their CPU in the event loop and its socket calls, not in
flott's own code (py-spy on the REST benchmark: ~88% of a request in aiohttp,
asyncio and the kernel). uvloop runs the same asyncio programs on libuv and
served 13-18% more REST requests per second here, so processes use it by
default. ``FLOTT_EVENT_LOOP=asyncio`` picks the standard loop (to rule uvloop in
or out when chasing a bug); an unknown value is an error, not a silent fallback.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from flott.errors import ConfigurationError

T = TypeVar("T")

ENV_VAR = "FLOTT_EVENT_LOOP"
_CHOICES = ("uvloop", "asyncio")


def event_loop_kind() -> str:
    """``uvloop`` or ``asyncio``: what :data:`ENV_VAR` asks for, uvloop when unset and installed."""
    wanted = os.environ.get(ENV_VAR, "").strip().lower()
    if wanted and wanted not in _CHOICES:
        raise ConfigurationError(f"{ENV_VAR}={wanted!r}: expected one of {', '.join(_CHOICES)}")
    if wanted == "asyncio":
        return "asyncio"
    try:
        import uvloop  # noqa: F401
    except ImportError:
        if wanted == "uvloop":
            raise ConfigurationError(f"{ENV_VAR}=uvloop but uvloop is not installed") from None
        return "asyncio"
    return "uvloop"


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop]:
    """A callable making a new loop of the configured kind."""
    if event_loop_kind() == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    return asyncio.new_event_loop


def new_event_loop() -> asyncio.AbstractEventLoop:
    return loop_factory()()


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the configured loop."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
