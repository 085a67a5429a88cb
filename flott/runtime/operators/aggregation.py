"""Built-in keyed aggregations: sum, min, max, min_by, max_by (Flink's SumAggregator, ComparableAggregator).

They are reduce functions run by the keyed reduce operator, selected by a
field: an int position (tuples, lists, Rows) or a str field name (Rows). On a
basic type (an int stream, say) only position 0 is allowed, meaning the value
itself, as in PyFlink.

Semantics follow Flink: ``sum``/``min``/``max`` return the first record of the
key with the selected field replaced by the running aggregate (other fields
stay those of the first record); ``min_by``/``max_by`` return the whole record
holding the extreme value, the *first* such record on ties.

Records are never mutated: the running value has already been emitted
downstream (and may sit in an output buffer), so an update builds a new record.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from operator import itemgetter
from typing import Any

from flott.errors import InvalidJobGraphError

Getter = Callable[[Any], Any]
Setter = Callable[[Any, Any], Any]


def _basic_type_error(field: int | str) -> TypeError:
    return TypeError(
        f"The {field} field selected on a basic type. A field expression on a basic type can only "
        "select the 0th field (which means selecting the entire basic type)."
    )


def _tuple_accessor(field: int | str, sample: tuple[Any, ...]) -> tuple[Getter, Setter]:
    if isinstance(field, str):
        fields = getattr(type(sample), "_fields", None)
        if fields is None or field not in fields:
            raise TypeError(
                f"cannot select field {field!r} by name on a {type(sample).__name__}; use a position"
            )
        pos = fields.index(field)
    else:
        pos = field
    if not -len(sample) <= pos < len(sample):
        raise IndexError(f"field position {pos} out of range for a record with {len(sample)} fields")
    make = getattr(type(sample), "_make", None)
    if type(sample) is tuple or make is None:

        def set_plain(record: Any, value: Any) -> Any:
            values = list(record)
            values[pos] = value
            return tuple(values)

        return itemgetter(pos), set_plain

    def set_named(record: Any, value: Any) -> Any:
        values = list(record)
        values[pos] = value
        return make(values)

    return itemgetter(pos), set_named


def _list_accessor(field: int | str) -> tuple[Getter, Setter]:
    if isinstance(field, str):
        raise TypeError(f"cannot select field {field!r} by name on a list; use a position")

    def set_field(record: Any, value: Any) -> Any:
        copied = list(record)
        copied[field] = value
        return copied

    return itemgetter(field), set_field


def _dict_accessor(field: int | str) -> tuple[Getter, Setter]:
    def set_field(record: Any, value: Any) -> Any:
        return {**record, field: value}

    return itemgetter(field), set_field


_COPY_HOOKS = ("__copy__", "__reduce__", "__reduce_ex__")


def _copy_record(record: Any) -> Any:
    # A class that defines its own copy or pickle hook rebuilds its storage on copy (flott's
    # Row rebuilds its values list in __reduce__); a plain object's shallow copy would share
    # the storage we are about to change, so it gets a deep copy.
    for klass in type(record).__mro__[:-1]:
        if any(hook in vars(klass) for hook in _COPY_HOOKS):
            return copy.copy(record)
    return copy.deepcopy(record)


def _item_accessor(field: int | str) -> tuple[Getter, Setter]:
    """Row-like records: ``record[field]`` by position or by field name."""

    def set_field(record: Any, value: Any) -> Any:
        copied = _copy_record(record)
        copied[field] = value
        return copied

    return itemgetter(field), set_field


def _attribute_accessor(field: str) -> tuple[Getter, Setter]:
    def get_field(record: Any) -> Any:
        return getattr(record, field)

    def set_field(record: Any, value: Any) -> Any:
        copied = copy.copy(record)
        setattr(copied, field, value)
        return copied

    return get_field, set_field


def _identity(record: Any) -> Any:
    return record


def _replace(record: Any, value: Any) -> Any:
    return value


def field_accessor(sample: Any, field: int | str) -> tuple[Getter, Setter]:
    """Getter and copy-on-write setter of ``field`` for records shaped like ``sample``."""
    if isinstance(sample, tuple):
        return _tuple_accessor(field, sample)
    if isinstance(sample, list):
        return _list_accessor(field)
    if isinstance(sample, dict):
        return _dict_accessor(field)
    if isinstance(sample, (str, bytes, bytearray)) or not hasattr(sample, "__getitem__"):
        if isinstance(field, str) and hasattr(sample, field):
            return _attribute_accessor(field)
        if field != 0:
            raise _basic_type_error(field)
        return _identity, _replace
    return _item_accessor(field)


class _FieldAggregator:
    """Binds the field accessor to the record type on first use (and again if the type changes)."""

    def __init__(self, field: int | str) -> None:
        if not isinstance(field, (int, str)) or isinstance(field, bool):
            raise InvalidJobGraphError(
                f"aggregation field must be an int position or a str name, got {field!r}"
            )
        self.field = field
        self._type: type | None = None
        self._get: Getter = _identity
        self._set: Setter = _replace

    def _bind(self, sample: Any) -> None:
        self._get, self._set = field_accessor(sample, self.field)
        self._type = type(sample)


class SumAggregator(_FieldAggregator):
    def reduce(self, accumulated: Any, value: Any) -> Any:
        if type(accumulated) is not self._type:
            self._bind(accumulated)
        get = self._get
        return self._set(accumulated, get(accumulated) + get(value))


class ComparableAggregator(_FieldAggregator):
    """min / max (field only) and min_by / max_by (whole record)."""

    def __init__(self, field: int | str, *, is_max: bool, by_record: bool) -> None:
        super().__init__(field)
        self.is_max = is_max
        self.by_record = by_record

    def reduce(self, accumulated: Any, value: Any) -> Any:
        if type(accumulated) is not self._type:
            self._bind(accumulated)
        get = self._get
        current = get(accumulated)
        candidate = get(value)
        better = candidate > current if self.is_max else candidate < current
        if not better:
            return accumulated  # ties keep the first record, as Flink's min_by/max_by default
        return value if self.by_record else self._set(accumulated, candidate)


def create_aggregator(kind: str, field: int | str) -> SumAggregator | ComparableAggregator:
    """The reduce function of the built-in aggregation ``kind``."""
    if kind == "sum":
        return SumAggregator(field)
    if kind in ("min", "max", "min_by", "max_by"):
        return ComparableAggregator(field, is_max=kind.startswith("max"), by_record=kind.endswith("_by"))
    raise InvalidJobGraphError(f"unknown aggregation {kind!r}")
