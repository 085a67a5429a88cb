"""``Duration``, ``Instant`` and ``Time``: PyFlink's time value classes as plain Python data.

PyFlink wraps ``java.time`` objects; flott keeps the amount itself (nanoseconds
for ``Duration``) so the objects pickle into JobGraphs and compare by value.
"""

from __future__ import annotations

import datetime as _dt

from flott.common.java_text import java_instant_to_string

__all__ = ["Duration", "Instant", "Time"]

_NANOS_PER_MILLI = 1_000_000
_NANOS_PER_SECOND = 1_000_000_000


class Duration:
    """A time-based amount of time, such as '34.5 seconds' (``java.time.Duration``)."""

    __slots__ = ("_nanos",)

    def __init__(self, nanos: int = 0) -> None:
        self._nanos = int(nanos)

    @staticmethod
    def of_days(days: int) -> Duration:
        return Duration(days * 86_400 * _NANOS_PER_SECOND)

    @staticmethod
    def of_hours(hours: int) -> Duration:
        return Duration(hours * 3_600 * _NANOS_PER_SECOND)

    @staticmethod
    def of_minutes(minutes: int) -> Duration:
        return Duration(minutes * 60 * _NANOS_PER_SECOND)

    @staticmethod
    def of_seconds(seconds: int) -> Duration:
        return Duration(seconds * _NANOS_PER_SECOND)

    @staticmethod
    def of_millis(millis: int) -> Duration:
        return Duration(millis * _NANOS_PER_MILLI)

    @staticmethod
    def of_nanos(nanos: int) -> Duration:
        return Duration(nanos)

    def to_millis(self) -> int:
        """Whole milliseconds (truncated toward negative infinity, like Java's ``toMillis``)."""
        return self._nanos // _NANOS_PER_MILLI

    def to_nanos(self) -> int:
        return self._nanos

    def get_seconds(self) -> int:
        return self._nanos // _NANOS_PER_SECOND

    def to_timedelta(self) -> _dt.timedelta:
        return _dt.timedelta(microseconds=self._nanos / 1000)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and self._nanos == other._nanos

    def __hash__(self) -> int:
        return hash(self._nanos)

    def __lt__(self, other: Duration) -> bool:
        return self._nanos < other._nanos

    def __repr__(self) -> str:
        return f"Duration.of_nanos({self._nanos})"

    def __str__(self) -> str:
        """ISO-8601 like Java's ``Duration.toString`` (``PT1M30S``, ``PT0.5S``)."""
        if self._nanos == 0:
            return "PT0S"
        total = self._nanos
        sign = "-" if total < 0 else ""
        total = abs(total)
        secs, nanos = divmod(total, _NANOS_PER_SECOND)
        hours, rem = divmod(secs, 3600)
        minutes, secs = divmod(rem, 60)
        out = "PT"
        if hours:
            out += f"{sign}{hours}H"
        if minutes:
            out += f"{sign}{minutes}M"
        if secs or nanos:
            frac = f".{nanos:09d}".rstrip("0") if nanos else ""
            out += f"{sign}{secs}{frac}S"
        return out


class Instant:
    """An instantaneous point on the time-line (seconds + nanos since the epoch)."""

    __slots__ = ("nanos", "seconds")

    def __init__(self, seconds: int, nanos: int) -> None:
        self.seconds = seconds
        self.nanos = nanos

    def to_epoch_milli(self) -> int:
        return self.seconds * 1000 + self.nanos // _NANOS_PER_MILLI

    @staticmethod
    def of_epoch_milli(epoch_milli: int) -> Instant:
        secs, millis = divmod(epoch_milli, 1000)
        return Instant(secs, millis * _NANOS_PER_MILLI)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instant) and self.seconds == other.seconds and self.nanos == other.nanos

    def __hash__(self) -> int:
        return hash((self.seconds, self.nanos))

    def __repr__(self) -> str:
        return f"Instant<{self.seconds}, {self.nanos}>"

    def to_java_string(self) -> str:
        """``java.time.Instant.toString``, e.g. ``2021-01-01T00:00:00.123Z``."""
        return java_instant_to_string(self.seconds, self.nanos)


class Time:
    """A time interval in milliseconds (Flink's deprecated ``Time``, still used by windows)."""

    __slots__ = ("_milliseconds",)

    def __init__(self, milliseconds: int) -> None:
        self._milliseconds = milliseconds

    def to_milliseconds(self) -> int:
        return self._milliseconds

    @staticmethod
    def milliseconds(milliseconds: int) -> Time:
        return Time(milliseconds)

    @staticmethod
    def seconds(seconds: int) -> Time:
        return Time(seconds * 1000)

    @staticmethod
    def minutes(minutes: int) -> Time:
        return Time(minutes * 60_000)

    @staticmethod
    def hours(hours: int) -> Time:
        return Time(hours * 3_600_000)

    @staticmethod
    def days(days: int) -> Time:
        return Time(days * 86_400_000)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Time) and self._milliseconds == other._milliseconds

    def __hash__(self) -> int:
        return hash(self._milliseconds)

    def __str__(self) -> str:
        return f"{self._milliseconds} ms"

    def __repr__(self) -> str:
        return f"Time.milliseconds({self._milliseconds})"
