"""What runs inside tasks for a Table/SQL job: compiled calcs, group aggregation, sinks' row formatting.

Records between table operators are ``(kind, values)`` pairs: ``kind`` is the RowKind's value (0 +I,
1 -U, 2 +U, 3 -D) and ``values`` a tuple. A calc (projection + filter) is compiled once per subtask
from Python source the planner generated (so per record it costs one Python call, not an
interpreter walk of the expression tree); the helpers it calls implement SQL's null semantics.
Group aggregation is keyed state holding the accumulators, emitting Flink's changelog: ``+I`` for a
new key, ``-U`` old / ``+U`` new on a change (nothing when the result did not change), ``-D`` when
the key's last row was retracted; in batch mode only the final values, when the input ends.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

from flott.common.time import Time
from flott.datastream.functions import FlatMapFunction, KeyedProcessFunction, KeySelector, MapFunction
from flott.datastream.state import StateTtlConfig, ValueStateDescriptor
from flott.errors import NotYetSupportedError
from flott.table import time_functions

MAX_WATERMARK = 9223372036854775807

# --------------------------------------------------------------------------- SQL null semantics


def n_plus(a: Any, b: Any) -> Any:
    return None if a is None or b is None else a + b


def n_minus(a: Any, b: Any) -> Any:
    return None if a is None or b is None else a - b


def n_times(a: Any, b: Any) -> Any:
    return None if a is None or b is None else a * b


def n_divide_int(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    if b == 0:
        raise ArithmeticError("/ by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def n_divide(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    if b == 0:
        return math.copysign(math.inf, a) if a else math.nan
    return a / b


def n_mod(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    return int(math.fmod(a, b))


def n_neg(a: Any) -> Any:
    return None if a is None else -a


def n_get(row: Any, index: int) -> Any:
    return None if row is None else row[index]


def n_abs(a: Any) -> Any:
    return None if a is None else abs(a)


def n_power(a: Any, b: Any) -> Any:
    return None if a is None or b is None else float(a) ** float(b)


def n_eq(a: Any, b: Any) -> Any:
    return None if a is None or b is None else a == b


def n_ne(a: Any, b: Any) -> Any:
    return None if a is None or b is None else a != b


def n_lt(a: Any, b: Any) -> Any:
    return None if a is None or b is None else a < b


def n_gt(a: Any, b: Any) -> Any:
    return None if a is None or b is None else a > b


def n_le(a: Any, b: Any) -> Any:
    return None if a is None or b is None else a <= b


def n_ge(a: Any, b: Any) -> Any:
    return None if a is None or b is None else a >= b


def n_and(a: Any, b: Any) -> Any:
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def n_or(a: Any, b: Any) -> Any:
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def n_not(a: Any) -> Any:
    return None if a is None else not a


def n_between(v: Any, lo: Any, hi: Any) -> Any:
    return n_and(n_ge(v, lo), n_le(v, hi))


def n_in(v: Any, *options: Any) -> Any:
    if v is None:
        return None
    if v in options:
        return True
    return None if None in options else False


def n_upper(s: Any) -> Any:
    return None if s is None else s.upper()


def n_lower(s: Any) -> Any:
    return None if s is None else s.lower()


def n_init_cap(s: Any) -> Any:
    return None if s is None else s.title()


def n_char_length(s: Any) -> Any:
    return None if s is None else len(s)


def n_cardinality(c: Any) -> Any:
    return None if c is None else len(c)


def n_substring(s: Any, start: Any, length: Any = -1) -> Any:
    """SQL SUBSTRING: 1-based; a start <= 0 counts like Flink's (0 is 1, negative from the end)."""
    if s is None or start is None or length is None:
        return None
    n = len(s)
    if start > 0:
        begin = start - 1
    elif start == 0:
        begin = 0
    else:
        begin = max(n + start, 0)
    if length == -1:
        return s[begin:]
    if length < 0:
        return None
    return s[begin : begin + length]


def n_concat(*parts: Any) -> Any:
    if any(p is None for p in parts):
        return None
    return "".join(parts)


def n_concat_ws(sep: Any, *parts: Any) -> Any:
    if sep is None:
        return None
    return sep.join(p for p in parts if p is not None)


def n_trim(s: Any, chars: Any = " ") -> Any:
    return None if s is None or chars is None else s.strip(chars)


def n_ltrim(s: Any, chars: Any = " ") -> Any:
    return None if s is None or chars is None else s.lstrip(chars)


def n_rtrim(s: Any, chars: Any = " ") -> Any:
    return None if s is None or chars is None else s.rstrip(chars)


def n_replace(s: Any, a: Any, b: Any) -> Any:
    return None if s is None or a is None or b is None else s.replace(a, b)


def n_reverse(s: Any) -> Any:
    return None if s is None else s[::-1]


def n_repeat(s: Any, n: Any) -> Any:
    return None if s is None or n is None else s * max(n, 0)


def n_position(needle: Any, s: Any) -> Any:
    return None if needle is None or s is None else s.find(needle) + 1


def n_starts_with(s: Any, p: Any) -> Any:
    return None if s is None or p is None else s.startswith(p)


def n_ends_with(s: Any, p: Any) -> Any:
    return None if s is None or p is None else s.endswith(p)


def n_lpad(s: Any, n: Any, pad: Any) -> Any:
    if s is None or n is None or pad is None or n < 0:
        return None
    if n <= len(s):
        return s[:n]
    if not pad:
        return None
    fill = (pad * n)[: n - len(s)]
    return fill + s


def n_rpad(s: Any, n: Any, pad: Any) -> Any:
    if s is None or n is None or pad is None or n < 0:
        return None
    if n <= len(s):
        return s[:n]
    if not pad:
        return None
    return s + (pad * n)[: n - len(s)]


_LIKE_CACHE: dict[str, Any] = {}


def n_like(s: Any, pattern: Any) -> Any:
    if s is None or pattern is None:
        return None
    rx = _LIKE_CACHE.get(pattern)
    if rx is None:
        import re

        out = []
        for ch in pattern:
            out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        rx = _LIKE_CACHE[pattern] = re.compile("".join(out), re.DOTALL)
    return rx.fullmatch(s) is not None


def n_coalesce(*vals: Any) -> Any:
    for v in vals:
        if v is not None:
            return v
    return None


def n_round(v: Any, places: Any) -> Any:
    if v is None or places is None:
        return None
    import decimal

    q = decimal.Decimal(1).scaleb(-places)
    r = decimal.Decimal(str(v)).quantize(q, rounding=decimal.ROUND_HALF_UP)
    return int(r) if isinstance(v, int) else float(r) if isinstance(v, float) else r


def n_sqrt(v: Any) -> Any:
    return None if v is None else math.sqrt(v)


def n_exp(v: Any) -> Any:
    return None if v is None else math.exp(v)


def n_ln(v: Any) -> Any:
    return None if v is None else math.log(v)


def n_log10(v: Any) -> Any:
    return None if v is None else math.log10(v)


def n_log2(v: Any) -> Any:
    return None if v is None else math.log2(v)


def n_sign(v: Any) -> Any:
    return None if v is None else (v > 0) - (v < 0)


def n_floor(v: Any) -> Any:
    return None if v is None else type(v)(math.floor(v))


def n_ceil(v: Any) -> Any:
    return None if v is None else type(v)(math.ceil(v))


def n_nullif(a: Any, b: Any) -> Any:
    return None if a is not None and a == b else a


def n_try_cast(v: Any, caster: Any) -> Any:
    if v is None:
        return None
    try:
        return caster(v)
    except (ValueError, ArithmeticError, TypeError):
        return None


def n_is_true(v: Any) -> bool:
    return v is True


def n_is_false(v: Any) -> bool:
    return v is False


def n_to_timestamp_ltz(v: Any, precision: Any = 3) -> Any:
    """TO_TIMESTAMP_LTZ(epoch, 0 | 3): seconds or milliseconds since the epoch, as UTC wall time."""
    if v is None or precision is None:
        return None
    import datetime

    if precision not in (0, 3):
        raise ValueError(f"TO_TIMESTAMP_LTZ: the precision must be 0 or 3, got {precision}")
    ms = v * 1000 if precision == 0 else v
    return datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=int(ms))


def n_cast(v: Any, caster: Any) -> Any:
    return None if v is None else caster(v)


HELPERS: dict[str, Any] = {name: fn for name, fn in globals().items() if name.startswith("n_")}
HELPERS.update(time_functions.HELPERS)


# --------------------------------------------------------------------------- compiled calcs


class CompiledCode:
    """Python source of one function over a row tuple ``v``, compiled lazily in the task (the source
    and its constants are what travels in the job; compiled code objects do not pickle)."""

    def __init__(self, source: str, consts: list[Any]) -> None:
        self.source = source
        self.consts = consts
        self._fn: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"source": self.source, "consts": self.consts, "_fn": None}

    def function(self) -> Any:
        if self._fn is None:
            namespace: dict[str, Any] = dict(HELPERS)
            namespace["K"] = self.consts
            exec(compile(self.source, "<flott-table-calc>", "exec"), namespace)
            self._fn = namespace["calc"]
        return self._fn


class CalcFunction(FlatMapFunction):
    """Projection and filter fused into one function: ``calc(values)`` returns the projected tuple or
    None when the filter drops the row; the row kind passes through."""

    def __init__(self, code: CompiledCode, udfs: list[Any]) -> None:
        self.code = code
        self.udfs = udfs
        self._calc: Any = None

    def open(self, runtime_context: Any) -> None:
        for u in self.udfs:
            if hasattr(u, "open"):
                u.open(runtime_context)
        self._calc = self.code.function()

    def close(self) -> None:
        for u in self.udfs:
            if hasattr(u, "close"):
                u.close()

    def flat_map(self, value: Any) -> Iterator[Any]:
        calc = self._calc or self.code.function()
        out = calc(value[1])
        if out is not None:
            yield (value[0], out)


# --------------------------------------------------------------------------- aggregates


class Accumulator:
    """One aggregate call's state: accumulate/retract a value, read the result."""

    def accumulate(self, v: Any) -> None:
        raise NotImplementedError

    def retract(self, v: Any) -> None:
        raise NotImplementedError

    def value(self) -> Any:
        raise NotImplementedError

    def merge(self, other: Any) -> None:
        """Fold ``other`` (of the same kind) into this one: windows that merge (sessions)."""
        raise NotImplementedError


class CountAcc(Accumulator):
    """COUNT(x) counts non-null x; COUNT(*) is planned as COUNT(1)."""

    def __init__(self) -> None:
        self.n = 0

    def accumulate(self, v: Any) -> None:
        if v is not None:
            self.n += 1

    def retract(self, v: Any) -> None:
        if v is not None:
            self.n -= 1

    def value(self) -> Any:
        return self.n

    def merge(self, other: Any) -> None:
        self.n += other.n


class SumAcc(Accumulator):
    def __init__(self, zero_if_empty: bool = False) -> None:
        self.total: Any = 0
        self.n = 0
        self.zero_if_empty = zero_if_empty

    def accumulate(self, v: Any) -> None:
        if v is not None:
            self.total += v
            self.n += 1

    def retract(self, v: Any) -> None:
        if v is not None:
            self.total -= v
            self.n -= 1

    def value(self) -> Any:
        return self.total if self.n or self.zero_if_empty else None

    def merge(self, other: Any) -> None:
        self.total += other.total
        self.n += other.n


class AvgAcc(SumAcc):
    """AVG: an integral input gives an integral (truncated) average, as Flink's AVG does."""

    def __init__(self, integral: bool) -> None:
        super().__init__()
        self.integral = integral

    def value(self) -> Any:
        if not self.n:
            return None
        if self.integral:
            return n_divide_int(self.total, self.n)
        return self.total / self.n


class MinMaxAcc(Accumulator):
    """MIN/MAX that can retract: a count per distinct value (Flink keeps a MapView for this)."""

    def __init__(self, is_max: bool) -> None:
        self.counts: dict[Any, int] = {}
        self.is_max = is_max

    def accumulate(self, v: Any) -> None:
        if v is not None:
            self.counts[v] = self.counts.get(v, 0) + 1

    def retract(self, v: Any) -> None:
        if v is not None:
            c = self.counts.get(v, 0) - 1
            if c <= 0:
                self.counts.pop(v, None)
            else:
                self.counts[v] = c

    def value(self) -> Any:
        if not self.counts:
            return None
        return max(self.counts) if self.is_max else min(self.counts)

    def merge(self, other: Any) -> None:
        for v, c in other.counts.items():
            self.counts[v] = self.counts.get(v, 0) + c


class DistinctAcc(Accumulator):
    """``agg(DISTINCT x)``: feeds the inner accumulator each distinct value once."""

    def __init__(self, inner: Accumulator) -> None:
        self.inner = inner
        self.seen: dict[Any, int] = {}

    def accumulate(self, v: Any) -> None:
        c = self.seen.get(v, 0)
        self.seen[v] = c + 1
        if c == 0:
            self.inner.accumulate(v)

    def retract(self, v: Any) -> None:
        c = self.seen.get(v, 0) - 1
        if c <= 0:
            self.seen.pop(v, None)
            self.inner.retract(v)
        else:
            self.seen[v] = c

    def value(self) -> Any:
        return self.inner.value()

    def merge(self, other: Any) -> None:
        for v, c in other.seen.items():
            if v not in self.seen:
                self.inner.accumulate(v)
            self.seen[v] = self.seen.get(v, 0) + c


class UdafAcc(Accumulator):
    """A Python AggregateFunction's accumulator."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.acc = fn.create_accumulator()

    def accumulate(self, v: Any) -> None:
        self.fn.accumulate(self.acc, *v)

    def retract(self, v: Any) -> None:
        self.fn.retract(self.acc, *v)

    def value(self) -> Any:
        return self.fn.get_value(self.acc)

    def merge(self, other: Any) -> None:
        merge = getattr(self.fn, "merge", None)
        if merge is None:
            raise NotYetSupportedError(
                f"{type(self.fn).__name__} has no merge(): it cannot aggregate over merging (session) windows"
            )
        merge(self.acc, [other.acc])


class AggSpec:
    """How to build one aggregate call's accumulator and which argument of the input it reads."""

    def __init__(
        self,
        kind: str,
        arg: int | None,
        distinct: bool = False,
        integral: bool = False,
        udaf: Any = None,
        args: tuple[int, ...] = (),
    ) -> None:
        self.kind, self.arg, self.distinct, self.integral, self.udaf, self.args = (
            kind,
            arg,
            distinct,
            integral,
            udaf,
            args,
        )

    def create(self) -> Accumulator:
        acc: Accumulator
        if self.kind == "count":
            acc = CountAcc()
        elif self.kind == "sum":
            acc = SumAcc()
        elif self.kind == "sum0":
            acc = SumAcc(zero_if_empty=True)
        elif self.kind == "avg":
            acc = AvgAcc(self.integral)
        elif self.kind in ("min", "max"):
            acc = MinMaxAcc(self.kind == "max")
        else:
            acc = UdafAcc(self.udaf)
        return DistinctAcc(acc) if self.distinct else acc

    def read(self, values: tuple[Any, ...]) -> Any:
        if self.udaf is not None:
            return tuple(values[i] for i in self.args)
        return 1 if self.arg is None else values[self.arg]


class TupleKeySelector(KeySelector):
    def __init__(self, indexes: tuple[int, ...]) -> None:
        self.indexes = indexes

    def get_key(self, value: Any) -> Any:
        vals = value[1]
        return tuple(vals[i] for i in self.indexes)


def with_state_ttl(descriptor: Any, ttl_ms: int) -> Any:
    """``table.exec.state.ttl`` as Flink's planner applies it to an operator's state
    (StateConfigUtil.createTtlConfig): refreshed when written, never read once expired."""
    if ttl_ms > 0:
        config = (
            StateTtlConfig.new_builder(Time.milliseconds(ttl_ms))
            .set_update_type(StateTtlConfig.UpdateType.OnCreateAndWrite)
            .set_state_visibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
            .build()
        )
        descriptor.enable_time_to_live(config)
    return descriptor


class GroupAggFunction(KeyedProcessFunction):
    """Flink's GroupAggFunction: accumulators per key in keyed state, a changelog out. In batch mode
    (``emit_at_end``) it emits each key's final row once, on the end-of-input watermark. With a
    state TTL a key idle longer than it starts anew (``+I``), and a retraction for it is dropped."""

    def __init__(
        self, key_indexes: tuple[int, ...], specs: list[AggSpec], emit_at_end: bool, state_ttl_ms: int = 0
    ) -> None:
        self.key_indexes = key_indexes
        self.specs = specs
        self.emit_at_end = emit_at_end
        self.state_ttl_ms = state_ttl_ms
        self._state: Any = None

    def open(self, runtime_context: Any) -> None:
        descriptor = with_state_ttl(ValueStateDescriptor("group-agg", None), self.state_ttl_ms)
        self._state = runtime_context.get_state(descriptor)

    def _result(self, key: tuple[Any, ...], accs: list[Accumulator]) -> tuple[Any, ...]:
        return key + tuple(a.value() for a in accs)

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        kind, vals = value
        st = self._state.value()
        key = tuple(vals[i] for i in self.key_indexes)
        if st is None:
            if kind in (1, 3):
                return None  # retraction of a row never seen (e.g. after state expiry)
            st = [0, [s.create() for s in self.specs]]
            if self.emit_at_end:
                ctx.timer_service().register_event_time_timer(MAX_WATERMARK)
        count, accs = st
        before = None if self.emit_at_end or count == 0 else self._result(key, accs)
        if kind in (0, 2):
            for s, a in zip(self.specs, accs, strict=True):
                a.accumulate(s.read(vals))
            count += 1
        else:
            for s, a in zip(self.specs, accs, strict=True):
                a.retract(s.read(vals))
            count -= 1
        st[0] = count
        if self.emit_at_end:
            self._state.update(st)
            return None
        if count <= 0:
            self._state.clear()
            return [(3, before)] if before is not None else None
        self._state.update(st)
        after = self._result(key, accs)
        if before is None:
            return [(0, after)]
        if before == after:
            return None
        return [(1, before), (2, after)]

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any] | None:
        st = self._state.value()
        if st is None or st[0] <= 0:
            return None
        key = ctx.get_current_key()
        self._state.clear()
        return [(0, self._result(tuple(key), st[1]))]


class RowsAtEndOfInput(KeyedProcessFunction):
    """A batch operator that needs all of a key's rows: they are kept in keyed state and
    ``on_timer`` (at the end-of-input watermark) gets them. ``STATE`` names the state."""

    STATE = "rows"

    def __init__(self) -> None:
        self._rows: Any = None

    def open(self, runtime_context: Any) -> None:
        self._rows = runtime_context.get_state(ValueStateDescriptor(self.STATE, None))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        rows = self._rows.value()
        if rows is None:
            rows = []
            ctx.timer_service().register_event_time_timer(MAX_WATERMARK)
        rows.append(value[1])
        self._rows.update(rows)
        return None


class SortFunction(RowsAtEndOfInput):
    """Batch ORDER BY [LIMIT]: every row to one key, sorted and emitted when the input ends."""

    STATE = "sort-rows"

    def __init__(self, keys: list[tuple[int, bool]], offset: int, limit: int | None) -> None:
        super().__init__()
        self.keys, self.offset, self.limit = keys, offset, limit

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any] | None:
        rows = self._rows.value() or []
        self._rows.clear()
        for index, ascending in reversed(self.keys):  # stable sorts, last key first; NULLs first ascending
            rows.sort(key=_sort_key(index), reverse=not ascending)
        end = None if self.limit is None else self.offset + self.limit
        return [(0, r) for r in rows[self.offset : end]]


def _sort_key(index: int) -> Any:
    def key(row: tuple[Any, ...]) -> tuple[bool, Any]:
        v = row[index]
        return (v is not None, v if v is not None else 0)

    return key


class ConstantKey(KeySelector):
    def get_key(self, value: Any) -> Any:
        return 0


# --------------------------------------------------------------------------- sources


class CsvRowParser(FlatMapFunction):
    """A csv line to the table's row (``(+I, values)``); blank lines are skipped.

    As Flink's csv format: a field equal to ``csv.null-literal`` is NULL; an empty field is an empty
    string in a string column and, with no null literal matching it, fails the job in any other column
    (Flink's ``Fail to deserialize at field``), so a file is never read back with values made up."""

    def __init__(
        self,
        names: list[str],
        types: list[Any],
        delimiter: str,
        null_literal: str | None = None,
        placed: tuple[tuple[int, Any], ...] = (),
    ) -> None:
        self.names, self.types, self.delimiter, self.null_literal = names, types, delimiter, null_literal
        self.placed = placed  # partition values: (column index, value), inserted into each row

    def flat_map(self, value: Any) -> Iterator[Any]:
        import csv

        line = value.rstrip("\r\n")
        if not line:
            return
        fields = next(csv.reader([line], delimiter=self.delimiter))
        if len(fields) != len(self.types):
            raise ValueError(
                f"csv line {line!r} has {len(fields)} fields, the table has {len(self.types)} columns"
            )
        null = self.null_literal
        row: list[Any] = []
        for n, t, f in zip(self.names, self.types, fields, strict=True):
            if f == null:
                row.append(None)
            elif f == "" and t.type_root not in ("CHAR", "VARCHAR"):
                raise ValueError(f"Fail to deserialize at field: {n}: empty String in csv line {line!r}")
            else:
                row.append(_csv_value(t, f))
        for i, v in self.placed:
            row.insert(i, v)
        yield (0, tuple(row))


def _csv_value(t: Any, text: str) -> Any:
    import datetime
    import decimal

    root = t.type_root
    if root in ("CHAR", "VARCHAR"):
        return text
    if text == "":
        return None
    if root in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT"):
        return int(text)
    if root in ("FLOAT", "DOUBLE"):
        return float(text)
    if root == "DECIMAL":
        return decimal.Decimal(text)
    if root == "BOOLEAN":
        return text.strip().lower() == "true"
    if root == "DATE":
        return datetime.date.fromisoformat(text)
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        return datetime.datetime.fromisoformat(text.replace("T", " ").rstrip("Z"))
    raise NotYetSupportedError(f"reading {t} from csv is not yet supported by flott")


# --------------------------------------------------------------------------- sinks


class NotNullEnforcer(FlatMapFunction):
    """Flink's sink constraint enforcer for NOT NULL columns the query may fill with NULL:
    ``table.exec.sink.not-null-enforcer`` ERROR fails the job naming the column, DROP drops the row."""

    def __init__(self, columns: list[tuple[int, str]], drop: bool) -> None:
        self.columns, self.drop = columns, drop

    def flat_map(self, value: Any) -> Iterator[Any]:
        vals = value[1]
        for index, name in self.columns:
            if vals[index] is None:
                if self.drop:
                    return
                raise ValueError(
                    f"Column '{name}' is NOT NULL, however, a null value is being written into it. "
                    "You can set job configuration 'table.exec.sink.not-null-enforcer'='DROP' to "
                    "suppress this exception and drop such records silently."
                )
        yield value


class RowToString(MapFunction):
    """Flink's ``Row.toString`` of the table row (``+I[1, Hi]``), what the print connector writes."""

    def __init__(self, types: list[Any]) -> None:
        self.types = types

    def map(self, value: Any) -> Any:
        kind, vals = value
        parts = ["null" if v is None else t.format_java(v) for t, v in zip(self.types, vals, strict=True)]
        return _KINDS[kind] + "[" + ", ".join(parts) + "]"


_KINDS = ("+I", "-U", "+U", "-D")


class DiscardRows(MapFunction):
    def map(self, value: Any) -> Any:
        return None
