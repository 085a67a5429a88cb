"""TimeDomain (Flink's ``org.apache.flink.streaming.api.TimeDomain``): which clock fired a timer.

PyFlink's ``pyflink.datastream.time_domain`` re-exports it (``flott.datastream.time_domain``).
"""

from __future__ import annotations

from enum import Enum


class TimeDomain(Enum):
    EVENT_TIME = 0
    PROCESSING_TIME = 1
