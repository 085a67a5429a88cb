"""TimerService (PyFlink's ``pyflink.datastream.timerservice``).

Defined in ``flott.api.streaming.timer_service``; handed out here under PyFlink's import path.
"""

from __future__ import annotations

from flott.api.streaming.timer_service import (
    TimerService,
)

__all__ = [
    "TimerService",
]
