"""TimeDomain (PyFlink's ``pyflink.datastream.time_domain``).

Defined in ``flott.api.streaming.time_domain``; handed out here under PyFlink's import path.
"""

from __future__ import annotations

from flott.api.streaming.time_domain import (
    TimeDomain,
)

__all__ = [
    "TimeDomain",
]
