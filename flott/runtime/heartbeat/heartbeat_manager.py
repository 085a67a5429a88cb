"""The asyncio shell of a :class:`~flott.runtime.heartbeat.heartbeat_monitor.HeartbeatMonitor`:
it only decides when to tick.

It wakes at the monitor's next possible timeout, but at least every ``check_period`` (targets
register and heartbeat while it sleeps, and the clock it reads may be injected, so a wake-up
computed once may be too late), and hands each :class:`TargetTimedOut` to the component.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from flott.runtime.heartbeat.heartbeat_monitor import HeartbeatMonitor, TargetTimedOut, Tick

log = logging.getLogger(__name__)

_MIN_CHECK_PERIOD_S = 0.05


def check_period(interval_s: float, timeout_s: float) -> float:
    """How often a watcher looks at least: a fifth of the timeout (so a timeout is noticed within 20%
    of it), never more than the heartbeat interval, never under 50 ms."""
    return min(interval_s, max(_MIN_CHECK_PERIOD_S, timeout_s / 5))


async def watch_heartbeats(
    monitor: HeartbeatMonitor,
    clock: Callable[[], float],
    period_s: float,
    on_timeout: Callable[[TargetTimedOut], Awaitable[None]],
) -> None:
    """Tick ``monitor`` until cancelled; ``on_timeout`` runs for every target that timed out."""
    while True:
        now = clock()
        due = monitor.next_timeout()
        wait = period_s if due is None else min(period_s, max(0.0, due - now))
        await asyncio.sleep(max(wait, _MIN_CHECK_PERIOD_S / 5))
        for timed_out in monitor.handle(Tick(), clock()):
            try:
                await on_timeout(timed_out)
            except Exception:  # a failing reaction must not stop the watching of the others
                log.exception("handling the timeout of %s failed", timed_out.target_id)
