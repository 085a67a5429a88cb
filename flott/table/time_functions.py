"""SQL date and time functions with Flink's result types and values (no clock: ``NOW()``,
``CURRENT_TIMESTAMP`` and ``UNIX_TIMESTAMP()`` without an argument are not planned).

``EXTRACT`` and its shorthands (``YEAR``, ``MONTH``, ``DAYOFMONTH``, ``HOUR`` ...), ``DATE_FORMAT``
(Java ``SimpleDateFormat`` patterns), ``TO_DATE``, ``TO_TIMESTAMP``, ``TIMESTAMPDIFF``, ``FLOOR``/
``CEIL`` of a time to a unit, ``FROM_UNIXTIME``, ``UNIX_TIMESTAMP(string)``. Values are Python
``date``/``datetime`` (naive, UTC: flott's local time zone). ``result_type`` gives the planner each
call's type; the ``n_`` helpers run in the compiled calc with SQL's null semantics.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from flott.errors import NotYetSupportedError
from flott.table.types import BigIntType, DataType, DateType, IntType, TimestampType, VarCharType

EXTRACT_UNITS = ("YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "DOY", "DOW")
FLOOR_UNITS = ("YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND")
_DIFF_MS = {"SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000, "WEEK": 604_800_000}
_EPOCH = _dt.datetime(1970, 1, 1)

TIME_FUNCTIONS = frozenset(
    {"extract", "dateFormat", "toDate", "toTimestamp", "timestampDiff", "floorTo", "ceilTo",
     "fromUnixtime", "unixTimestamp"}
)


def result_type(name: str, types: list[DataType]) -> DataType:
    nullable = any(t.is_nullable for t in types)
    if name == "extract":
        return BigIntType(nullable)
    if name in ("dateFormat", "fromUnixtime"):
        return VarCharType(VarCharType.MAX_LENGTH, nullable)
    if name == "toDate":
        return DateType(True)
    if name == "toTimestamp":
        return TimestampType(3, True)
    if name == "timestampDiff":
        return IntType(nullable)
    if name in ("floorTo", "ceilTo"):
        return types[0]
    if name == "unixTimestamp":
        return BigIntType(True)
    raise NotYetSupportedError(f"the time function '{name}' is not yet supported by flott")


def check_unit(unit: str, allowed: tuple[str, ...], function: str) -> str:
    u = unit.upper()
    if u not in allowed:
        raise NotYetSupportedError(f"{function} with the unit {u} is not yet supported by flott")
    return u


# --------------------------------------------------------------------------- Java date patterns

_PATTERN = re.compile(r"'[^']*'|y+|M+|d+|H+|h+|m+|s+|S+|a|E+|D+")


def java_format(value: _dt.date, pattern: str) -> str:
    """``value`` formatted with a ``SimpleDateFormat`` pattern (the letters Flink's users use)."""
    moment = value if isinstance(value, _dt.datetime) else _dt.datetime(value.year, value.month, value.day)
    out = []
    pos = 0
    for m in _PATTERN.finditer(pattern):
        out.append(pattern[pos : m.start()])
        pos = m.end()
        tok = m.group(0)
        c, n = tok[0], len(tok)
        if c == "'":
            out.append(tok[1:-1] if n > 2 else "'")
        elif c == "y":
            out.append(f"{moment.year % 100:02d}" if n == 2 else f"{moment.year:0{n}d}")
        elif c == "M":
            out.append(moment.strftime("%B" if n >= 4 else "%b") if n >= 3 else f"{moment.month:0{n}d}")
        elif c == "d":
            out.append(f"{moment.day:0{n}d}")
        elif c == "D":
            out.append(f"{moment.timetuple().tm_yday:0{n}d}")
        elif c == "H":
            out.append(f"{moment.hour:0{n}d}")
        elif c == "h":
            out.append(f"{(moment.hour % 12) or 12:0{n}d}")
        elif c == "m":
            out.append(f"{moment.minute:0{n}d}")
        elif c == "s":
            out.append(f"{moment.second:0{n}d}")
        elif c == "S":
            out.append(f"{moment.microsecond // 1000:03d}"[:n].ljust(n, "0"))
        elif c == "a":
            out.append("AM" if moment.hour < 12 else "PM")
        elif c == "E":
            out.append(moment.strftime("%A" if n >= 4 else "%a"))
    out.append(pattern[pos:])
    return "".join(out)


def java_parse(text: str, pattern: str) -> _dt.datetime:
    """``text`` read with a ``SimpleDateFormat`` pattern of numeric fields."""
    regex = []
    fields: list[str] = []
    pos = 0
    for m in _PATTERN.finditer(pattern):
        regex.append(re.escape(pattern[pos : m.start()]))
        pos = m.end()
        tok = m.group(0)
        if tok[0] == "'":
            regex.append(re.escape(tok[1:-1]))
            continue
        if tok[0] not in "yMdHmsS":
            raise NotYetSupportedError(f"parsing the date pattern letter {tok[0]!r} is not yet supported")
        regex.append(r"(\d+)")
        fields.append(tok[0])
    regex.append(re.escape(pattern[pos:]))
    match = re.fullmatch("".join(regex), text.strip())
    if match is None:
        raise ValueError(f"'{text}' does not match the pattern '{pattern}'")
    parts = dict.fromkeys("yMdHmsS", 0) | {"M": 1, "d": 1}
    for f, v in zip(fields, match.groups(), strict=True):
        parts[f] = int(v)
    return _dt.datetime(
        parts["y"], parts["M"], parts["d"], parts["H"], parts["m"], parts["s"], parts["S"] * 1000
    )


# --------------------------------------------------------------------------- helpers


def n_extract(unit: Any, v: Any) -> Any:
    if v is None:
        return None
    if unit == "YEAR":
        return v.year
    if unit == "QUARTER":
        return (v.month - 1) // 3 + 1
    if unit == "MONTH":
        return v.month
    if unit == "WEEK":
        return v.isocalendar()[1]
    if unit == "DAY":
        return v.day
    if unit == "DOY":
        return v.timetuple().tm_yday
    if unit == "DOW":
        return v.isoweekday() % 7 + 1  # Sunday 1 ... Saturday 7
    if not isinstance(v, _dt.datetime | _dt.time):
        raise ValueError(f"EXTRACT({unit} FROM a DATE) has no {unit.lower()}")
    return {"HOUR": v.hour, "MINUTE": v.minute, "SECOND": v.second}[unit]


def n_date_format(v: Any, pattern: Any) -> Any:
    if v is None or pattern is None:
        return None
    if isinstance(v, str):
        v = _dt.datetime.fromisoformat(v.strip())
    return java_format(v, pattern)


def n_to_date(text: Any, pattern: Any = "yyyy-MM-dd") -> Any:
    if text is None or pattern is None:
        return None
    try:
        return java_parse(text, pattern).date()
    except ValueError:
        return None


def n_to_timestamp(text: Any, pattern: Any = "yyyy-MM-dd HH:mm:ss") -> Any:
    if text is None or pattern is None:
        return None
    try:
        return java_parse(text, pattern)
    except ValueError:
        return None


def _as_datetime(v: Any) -> _dt.datetime:
    return v if isinstance(v, _dt.datetime) else _dt.datetime(v.year, v.month, v.day)


def n_timestamp_diff(unit: Any, a: Any, b: Any) -> Any:
    """TIMESTAMPDIFF(unit, a, b): whole units from a to b (truncated toward zero)."""
    if a is None or b is None:
        return None
    x, y = _as_datetime(a), _as_datetime(b)
    if unit in ("MONTH", "QUARTER", "YEAR"):
        months = (y.year - x.year) * 12 + (y.month - x.month)
        if months > 0 and (y.day, y.time()) < (x.day, x.time()):
            months -= 1
        elif months < 0 and (y.day, y.time()) > (x.day, x.time()):
            months += 1
        return int(months / {"MONTH": 1, "QUARTER": 3, "YEAR": 12}[unit])
    ms = (y - x) // _dt.timedelta(milliseconds=1)
    step = _DIFF_MS[unit]
    return int(ms / step) if abs(ms) < 2**52 else (abs(ms) // step) * (1 if ms >= 0 else -1)


def _floor(v: Any, unit: str) -> Any:
    d = _as_datetime(v)
    if unit == "YEAR":
        d = d.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
    elif unit == "QUARTER":
        d = d.replace(month=(d.month - 1) // 3 * 3 + 1, day=1, hour=0, minute=0, second=0, microsecond=0)
    elif unit == "MONTH":
        d = d.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    elif unit == "WEEK":  # weeks start on Sunday, as in Flink
        d = (d - _dt.timedelta(days=d.isoweekday() % 7)).replace(hour=0, minute=0, second=0, microsecond=0)
    elif unit == "DAY":
        d = d.replace(hour=0, minute=0, second=0, microsecond=0)
    elif unit == "HOUR":
        d = d.replace(minute=0, second=0, microsecond=0)
    elif unit == "MINUTE":
        d = d.replace(second=0, microsecond=0)
    else:
        d = d.replace(microsecond=0)
    return d if isinstance(v, _dt.datetime) else d.date()


def _step(d: Any, unit: str) -> Any:
    if unit in ("YEAR", "QUARTER", "MONTH"):
        months = {"YEAR": 12, "QUARTER": 3, "MONTH": 1}[unit]
        total = d.year * 12 + d.month - 1 + months
        return d.replace(year=total // 12, month=total % 12 + 1)
    return d + _dt.timedelta(milliseconds={"WEEK": 604_800_000, **_DIFF_MS}[unit])


def n_floor_to(v: Any, unit: Any) -> Any:
    return None if v is None else _floor(v, unit)


def n_ceil_to(v: Any, unit: Any) -> Any:
    if v is None:
        return None
    f = _floor(v, unit)
    return f if f == v else _step(f, unit)


def n_from_unixtime(seconds: Any, pattern: Any = "yyyy-MM-dd HH:mm:ss") -> Any:
    if seconds is None or pattern is None:
        return None
    return java_format(_EPOCH + _dt.timedelta(seconds=int(seconds)), pattern)


def n_unix_timestamp(text: Any, pattern: Any = "yyyy-MM-dd HH:mm:ss") -> Any:
    if text is None or pattern is None:
        return None
    try:
        moment = java_parse(text, pattern)
    except ValueError:
        return None
    return (moment - _EPOCH) // _dt.timedelta(seconds=1)


HELPERS: dict[str, Any] = {name: fn for name, fn in globals().items() if name.startswith("n_")}
HELPER_OF = {
    "extract": "n_extract",
    "dateFormat": "n_date_format",
    "toDate": "n_to_date",
    "toTimestamp": "n_to_timestamp",
    "timestampDiff": "n_timestamp_diff",
    "floorTo": "n_floor_to",
    "ceilTo": "n_ceil_to",
    "fromUnixtime": "n_from_unixtime",
    "unixTimestamp": "n_unix_timestamp",
}
