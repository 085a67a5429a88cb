"""SIGTERM/SIGINT: shut down in order, and exit anyway once the shutdown timeout has passed.

A process asked to stop first sets its shutdown event (the entrypoint then stops
its components front to back). That ordered shutdown needs the event loop; if
the loop is stuck (CPU work that should not be there, a thread the interpreter
waits for at exit, a peer that never answers) the process must still end, or
``flott cluster stop`` and process supervisors escalate to SIGKILL without the
process saying why. So the handler is a Python-level signal handler (it runs in
the main thread between bytecodes, even while the loop is busy, which an
``add_signal_handler`` callback does not) and it starts a watchdog thread that
logs and ends the process with :data:`EXIT_CODE_SHUTDOWN_TIMEOUT` after
``cluster.services.shutdown-timeout`` (Flink's key for how long cluster services
may take to shut down). A second signal ends the process at once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading
from types import FrameType

log = logging.getLogger(__name__)

EXIT_CODE_SHUTDOWN_TIMEOUT = 3
SHUTDOWN_TIMEOUT_KEY = "cluster.services.shutdown-timeout"


def install_termination_handlers(event: asyncio.Event, shutdown_timeout_s: float) -> None:
    """On SIGTERM/SIGINT set ``event`` on the running loop; exit after ``shutdown_timeout_s``."""
    loop = asyncio.get_running_loop()
    received: list[int] = []

    def watchdog() -> None:
        log.error(
            "did not stop within %.1f s of the termination signal (%s); exiting now",
            shutdown_timeout_s,
            SHUTDOWN_TIMEOUT_KEY,
        )
        _exit_now(EXIT_CODE_SHUTDOWN_TIMEOUT)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if received:
            _exit_now(128 + signum)
        received.append(signum)
        timer = threading.Timer(shutdown_timeout_s, watchdog)
        timer.daemon = True
        timer.start()
        try:
            loop.call_soon_threadsafe(event.set)
        except RuntimeError:  # the loop is already closed: nothing left to stop in order
            _exit_now(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            signal.signal(sig, on_signal)
        except ValueError:  # not the main thread (embedded use): the caller handles signals
            return


def _exit_now(code: int) -> None:
    for stream in (sys.stderr, sys.stdout):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
