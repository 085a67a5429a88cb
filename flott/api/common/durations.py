"""Turn the duration shapes PyFlink programs pass into milliseconds.

PyFlink APIs take ``int`` milliseconds in some places, ``Time`` in others and
``Duration`` in the 2.x ones; programs written against either generation must
keep working, so every flott API that takes a duration funnels through here.
"""

from __future__ import annotations

import datetime
from typing import Any


def to_millis(value: Any) -> int:
    """Milliseconds of an int (already ms), ``Time``, ``Duration`` or ``timedelta``."""
    if isinstance(value, bool):
        raise TypeError(f"expected a duration, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, datetime.timedelta):
        return int(value.total_seconds() * 1000)
    for attr in ("to_milliseconds", "to_millis", "get_milliseconds"):
        method = getattr(value, attr, None)
        if callable(method):
            return int(method())
    nanos = getattr(value, "to_nanos", None)
    if callable(nanos):
        return int(nanos()) // 1_000_000
    raise TypeError(f"expected a duration (int milliseconds, Time, Duration or timedelta), got {value!r}")
