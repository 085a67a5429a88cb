"""TimeDomain (PyFlink's ``pyflink.datastream.time_domain``): which clock fired a timer."""

from __future__ import annotations

from enum import Enum


class TimeDomain(Enum):
    EVENT_TIME = 0
    PROCESSING_TIME = 1
