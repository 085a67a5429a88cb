"""Java ``toString`` renderings of values, so flott prints what PyFlink's Java side prints.

PyFlink hands records with a declared type to Java, and Java's sinks print
``Float.toString``/``Double.toString``/``HashMap.toString``/``Instant.toString``
of the converted value. Python's ``repr`` differs in small but visible ways
(``1e+16`` vs ``1.0E16``, float32 rounding, HashMap iteration order), and tests
compare flott's output byte for byte with PyFlink's, so the rules live here.

Number rendering follows the JDK 19+ specification (shortest decimal that
round-trips, closest to the exact value; when one digit suffices, the closest
two-digit decimal is used, e.g. ``Double.MIN_VALUE`` → ``4.9E-324``). Older
JDKs occasionally print one superfluous digit; we do not reproduce that.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import struct
from collections.abc import Callable, Iterable
from typing import Any

_F32 = struct.Struct("<f")
_F32_MAX = 3.4028234663852886e38
_DBL_MIN_NORMAL = 2.2250738585072014e-308

JDK17_STYLE: bool = os.environ.get("FLOTT_JAVA_NUMBER_STYLE", "jdk17").lower() != "jdk19"
"""Print numbers like JDK 17 (Flink 2.x's default runtime; the default) or like JDK 19+.

The two differ only for large values: JDK <= 18 prints integral floats/doubles below 2^63
from their exact digits (``1.23456792E8`` for ``123456789f``) where JDK 19+ prints the
shortest digits (``1.2345679E8``). Set ``FLOTT_JAVA_NUMBER_STYLE=jdk19`` to get the latter."""


def set_java_number_style(style: str) -> str:
    """Switch number rendering to ``"jdk17"`` or ``"jdk19"``; returns the previous style."""
    global JDK17_STYLE
    if style not in ("jdk17", "jdk19"):
        raise ValueError("style must be 'jdk17' or 'jdk19'")
    previous = "jdk17" if JDK17_STYLE else "jdk19"
    JDK17_STYLE = style == "jdk17"
    _F32_TEXT.clear()
    return previous


def to_float32(value: float) -> float:
    """Round a Python float through IEEE-754 binary32, as Java's ``(float)`` cast does."""
    try:
        return float(_F32.unpack(_F32.pack(value))[0])
    except OverflowError:
        # struct refuses values beyond float32's range; Java's narrowing gives +-Infinity.
        return math.copysign(math.inf, value)


def _digits_and_exponent(sci: str) -> tuple[bool, str, int]:
    """Split a ``%e``-style string into (negative, significant digits, decimal exponent)."""
    neg = sci[0] == "-"
    if neg:
        sci = sci[1:]
    mant, _, exp = sci.partition("e")
    digits = mant.replace(".", "").rstrip("0") or "0"
    return neg, digits, int(exp)


def _layout(neg: bool, digits: str, exp: int) -> str:
    """Java's layout of a decimal ``0.d1d2..dn x 10^(exp+1)``: plain in [1e-3, 1e7), else ``d.dddEn``."""
    if -3 <= exp < 7:
        if exp >= 0:
            int_part = digits[: exp + 1].ljust(exp + 1, "0")
            frac = digits[exp + 1 :] or "0"
        else:
            int_part = "0"
            frac = "0" * (-exp - 1) + digits
        text = f"{int_part}.{frac}"
    else:
        text = f"{digits[0]}.{digits[1:] or '0'}E{exp}"
    return "-" + text if neg else text


_F32_TEXT: dict[float, str] = {}
_F32_TEXT_LIMIT = 1 << 16


def java_float_to_string(value: float) -> str:
    """``Float.toString`` of ``value`` after rounding it to float32 (how PyFlink ships a FLOAT).

    Results are memoised (bounded): finding the shortest float32 digits takes a few
    float formatting calls, and FLOAT columns tend to repeat values."""
    text = _F32_TEXT.get(value)
    if text is None or value == 0.0:
        text = _float_to_string(value)
        if len(_F32_TEXT) >= _F32_TEXT_LIMIT:
            _F32_TEXT.clear()
        if value != 0.0:  # 0.0 and -0.0 are equal keys but print differently
            _F32_TEXT[value] = text
    return text


def _float_to_string(value: float) -> str:
    f = to_float32(value)
    if f != f:
        return "NaN"
    if f == 0.0:
        return "-0.0" if math.copysign(1.0, f) < 0 else "0.0"
    if f in (math.inf, -math.inf):
        return "Infinity" if f > 0 else "-Infinity"
    if JDK17_STYLE and 16777216.0 <= abs(f) < 9.223372036854775808e18:
        return _jdk17_integer(f, 24)
    # The shortest precision whose correctly rounded decimal maps back to the same float32.
    # Round-tripping is monotone in the precision (a p-digit decimal is also a (p+1)-digit
    # one), so binary search over 1..9 (9 significant digits always round-trip).
    pack, unpack = _F32.pack, _F32.unpack
    lo, hi = 1, 9
    best = ""
    while lo < hi:
        mid = (lo + hi) >> 1
        sci = f"{f:.{mid - 1}e}"
        try:
            ok = unpack(pack(float(sci)))[0] == f
        except OverflowError:  # rounded beyond float32's range near Float.MAX_VALUE
            ok = False
        if ok:
            hi = mid
            best = sci
        else:
            lo = mid + 1
    if hi == 1:
        best = f"{f:.1e}"  # Java picks the closest 2-digit decimal when 1 digit would do
    elif hi == 9 and not best:
        best = f"{f:.8e}"
    return _layout(*_digits_and_exponent(best))


def java_double_to_string(value: float) -> str:
    """``Double.toString``: Python's shortest repr digits laid out the Java way."""
    d = float(value)
    a = abs(d)
    if 1e-3 <= a < 1e7:
        # Python's repr is plain (never exponent) here and has the same shortest digits.
        return repr(d)
    if d != d:
        return "NaN"
    if a == math.inf:
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0.0:
        return "-0.0" if math.copysign(1.0, d) < 0 else "0.0"
    if JDK17_STYLE and 1e7 <= a < 9.223372036854775808e18 and d == int(d):
        return _jdk17_integer(d, 53)
    neg, digits, exp = _digits_and_exponent(_repr_to_sci(repr(d)))
    if len(digits) == 1 and a < _DBL_MIN_NORMAL:
        neg, digits, exp = _digits_and_exponent(f"{d:.1e}")
    return _layout(neg, digits, exp)


def _jdk17_integer(x: float, significant_bits: int) -> str:
    """JDK <= 18 prints integral values below 2^63 from their exact digits, rounding off
    only the low digits that a power-of-two scale makes meaningless (half-up)."""
    neg = x < 0
    n = int(abs(x))
    bin_exp = n.bit_length() - 1
    p2 = bin_exp - significant_bits - 1
    insignificant = (p2 * 30103) // 100000 if p2 > 3 else 0
    exp10 = 0
    if insignificant:
        scale = 10**insignificant
        n, residue = divmod(n, scale)
        if residue >= scale >> 1:
            n += 1
    text = str(n)
    exp10 = len(text) - 1 + insignificant
    return _layout(neg, text.rstrip("0") or "0", exp10)


def _repr_to_sci(r: str) -> str:
    """Normalise Python's repr (``1e+16``, ``12345678.0``, ``1.5e-05``) to ``d.ddde±n`` form."""
    if "e" in r:
        return r
    neg = r.startswith("-")
    body = r[1:] if neg else r
    int_part, _, frac = body.partition(".")
    int_part = int_part.lstrip("0")
    if int_part:
        digits = int_part + frac
        exp = len(int_part) - 1
    else:  # pragma: no cover - |x| < 1 with plain repr is inside the fast path
        stripped = frac.lstrip("0")
        exp = -(len(frac) - len(stripped)) - 1
        digits = stripped
    sci = f"{digits[0]}.{digits[1:] or '0'}e{exp}"
    return "-" + sci if neg else sci


# --- strings and hashing: java.util.HashMap iteration order -------------------------------


def java_string_hash(s: str) -> int:
    """``String.hashCode`` (over UTF-16 code units), as an unsigned 32-bit int."""
    h = 0
    if s.isascii():
        for ch in s.encode("ascii"):
            h = (31 * h + ch) & 0xFFFFFFFF
        return h
    units = s.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] | (units[i + 1] << 8))) & 0xFFFFFFFF
    return h


def java_int_hash(v: int) -> int:
    """``Integer.hashCode`` (also Short/Byte): the value's low 32 bits."""
    return v & 0xFFFFFFFF


def java_long_hash(v: int) -> int:
    """``Long.hashCode``: ``(int)(v ^ (v >>> 32))``."""
    u = v & 0xFFFFFFFFFFFFFFFF
    return (u ^ (u >> 32)) & 0xFFFFFFFF


def java_boolean_hash(v: bool) -> int:
    return 1231 if v else 1237


def java_float_hash(v: float) -> int:
    """``Float.hashCode`` = ``floatToIntBits`` (canonical NaN)."""
    f = to_float32(v)
    if f != f:
        return 0x7FC00000
    return int(struct.unpack("<I", _F32.pack(f))[0])


def java_double_hash(v: float) -> int:
    """``Double.hashCode`` = bits ^ (bits >>> 32) of ``doubleToLongBits``."""
    if v != v:
        bits = 0x7FF8000000000000
    else:
        bits = struct.unpack("<Q", struct.pack("<d", v))[0]
    return (bits ^ (bits >> 32)) & 0xFFFFFFFF


def _hashmap_capacity(n: int) -> int:
    """Final table size of ``new HashMap<>(n)`` after ``n`` puts (load factor 0.75)."""
    cap = 1
    while cap < n:
        cap <<= 1
    while n > int(cap * 0.75):
        cap <<= 1
    return cap


def java_hashmap_order(
    items: Iterable[tuple[Any, Any]], key_hash: Callable[[Any], int]
) -> list[tuple[Any, Any]]:
    """The iteration order of a ``java.util.HashMap`` built by ``new HashMap<>(n)`` + puts in order.

    HashMap iterates bucket by bucket (index ``spread(hash) & (cap - 1)``) and,
    within a bucket, in insertion order (resizes split buckets preserving order).
    Treeified buckets (8+ colliding keys) are not modelled.
    """
    pairs = list(items)
    mask = _hashmap_capacity(len(pairs)) - 1

    def bucket(kv: tuple[Any, Any]) -> int:
        k = kv[0]
        if k is None:
            return 0
        h = key_hash(k)
        return (h ^ (h >> 16)) & mask

    return sorted(pairs, key=bucket)  # sorted() is stable: insertion order within a bucket


# --- time ---------------------------------------------------------------------------------

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


def _fraction(nanos: int, groups_of_three: bool) -> str:
    if groups_of_three:
        if nanos == 0:
            return ""
        if nanos % 1_000_000 == 0:
            return f".{nanos // 1_000_000:03d}"
        if nanos % 1_000 == 0:
            return f".{nanos // 1_000:06d}"
        return f".{nanos:09d}"
    return "." + (f"{nanos:09d}".rstrip("0") or "0")


def java_instant_to_string(seconds: int, nanos: int) -> str:
    """``Instant.toString`` (ISO-8601, UTC, fraction in groups of 3 digits, omitted if zero)."""
    when = _EPOCH + _dt.timedelta(seconds=seconds)
    year = when.year
    base = f"{year:04d}" if year <= 9999 else f"+{year}"
    return f"{base}-{when:%m-%dT%H:%M:%S}{_fraction(nanos, True)}Z"


def java_sql_timestamp_to_string(value: _dt.datetime) -> str:
    """``java.sql.Timestamp.toString``: ``yyyy-mm-dd hh:mm:ss.f...`` (at least one fraction digit)."""
    if value.tzinfo is not None:
        value = value.astimezone().replace(tzinfo=None)
    return f"{value.year:04d}-{value:%m-%d %H:%M:%S}{_fraction(value.microsecond * 1000, False)}"


def java_sql_date_to_string(value: _dt.date) -> str:
    """``java.sql.Date.toString``: ``yyyy-mm-dd``."""
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def java_sql_time_to_string(value: _dt.time | _dt.datetime) -> str:
    """``java.sql.Time.toString``: ``hh:mm:ss`` (fraction dropped)."""
    return f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
