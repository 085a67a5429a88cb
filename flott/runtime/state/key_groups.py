"""Key groups: how keys map to subtasks (Flink's KeyGroupRangeAssignment).

Keyed state is partitioned into ``max_parallelism`` key groups. A key belongs
to exactly one key group for the lifetime of a job (it is a function of the key
and the max parallelism only), and each subtask owns a contiguous range of key
groups. That indirection is what lets a savepoint taken at one parallelism be
restored at another: state moves between subtasks a key group at a time.

The hash must be *stable*: the producer that routes a record and the consumer
that owns its state run in different processes, and a restarted job must route
a key where its state was restored. Python's ``hash()`` of ``str``/``bytes`` is
salted per process (PYTHONHASHSEED), so it cannot be used. We hash a canonical
byte encoding of the key with xxh3 instead.

The encoding respects Python equality where dict keys collapse: ``1``,
``True`` and ``1.0`` are one dict key, so they encode identically; a ``str``
subclass hashes like the equal ``str``; named Rows equal whatever their field
order encode alike. Distinct keys may collide (that only puts them in the same
key group). Keys mixing other equal-but-different types (``Decimal(1)`` and
``1``) are not unified: they go through the pickle fallback.
"""

from __future__ import annotations

import pickle
import struct
from collections.abc import Callable, Iterator
from typing import Any

import xxhash

from flott.common.types import Row

DEFAULT_LOWER_BOUND_MAX_PARALLELISM = 128
"""Smallest default max parallelism, as Flink: enough room to scale out later."""

UPPER_BOUND_MAX_PARALLELISM = 1 << 15
"""Largest max parallelism Flink allows (key groups are addressed with 15 bits)."""

_xxh3 = xxhash.xxh3_64_intdigest
_pack_double = struct.Struct("<d").pack


def _encode_int(value: int) -> bytes:
    # Fixed 8 bytes for the common range, variable length beyond: ints are unbounded.
    if -(1 << 63) <= value < (1 << 63):
        return b"I" + value.to_bytes(8, "little", signed=True)
    n = (value.bit_length() + 8) // 8
    return b"J" + n.to_bytes(4, "little") + value.to_bytes(n, "little", signed=True)


def _encode_float(value: float) -> bytes:
    # An integral float equals the int (2.0 == 2 is one dict key), so it must encode as one.
    if value.is_integer():
        return _encode_int(int(value))
    return b"F" + _pack_double(value)


def _encode_str(value: str) -> bytes:
    data = value.encode("utf-8", "surrogatepass")
    return b"S" + len(data).to_bytes(4, "little") + data


def _encode_bytes(value: bytes | bytearray | memoryview) -> bytes:
    data = bytes(value)
    return b"B" + len(data).to_bytes(4, "little") + data


def _encode_sequence(tag: bytes, items: Any) -> bytes:
    parts = [canonical_key_bytes(item) for item in items]
    return tag + len(parts).to_bytes(4, "little") + b"".join(parts)


def _encode_row(row: Row) -> bytes:
    # Named rows are equal whatever their field order (Row.__eq__), so encode them sorted by name.
    try:
        named = row.as_dict()
    except TypeError:  # an unnamed row
        return _encode_sequence(b"R", list(row))
    return _encode_sequence(b"W", sorted(named.items(), key=lambda item: item[0]))


def canonical_key_bytes(key: Any) -> bytes:
    """A byte encoding of ``key`` that is identical in every process for equal keys.

    Covers what keys are in practice: None, bool, int, float, str, bytes, and
    tuples/Rows of those (recursively). Anything else falls back to pickle
    protocol 5, which is deterministic for value types such as ``Decimal``,
    ``datetime`` and enums (order-unstable containers are handled explicitly).
    """
    if key is None:
        return b"N"
    if isinstance(key, bool):
        return _encode_int(int(key))
    if isinstance(key, int):
        return _encode_int(key)
    if isinstance(key, float):
        return _encode_float(key)
    if isinstance(key, str):
        return _encode_str(key)
    if isinstance(key, (bytes, bytearray, memoryview)):
        return _encode_bytes(key)
    if isinstance(key, (tuple, list)):
        return _encode_sequence(b"T", key)
    if isinstance(key, Row):
        return _encode_row(key)
    if isinstance(key, (frozenset, set)):
        # Set iteration order follows the salted hash: sort the encoded members instead.
        members = sorted(canonical_key_bytes(m) for m in key)
        return b"Z" + len(members).to_bytes(4, "little") + b"".join(members)
    index = getattr(type(key), "__index__", None)
    if index is not None:
        # numpy integers and the like equal the Python int they index as.
        return _encode_int(index(key))
    return b"P" + pickle.dumps(key, protocol=5)


def stable_key_hash(key: Any) -> int:
    """64-bit hash of ``key``, the same in every process (unlike ``hash()``)."""
    if isinstance(key, str):
        # The most common key type: hash its UTF-8 bytes directly (nested strs are length-prefixed).
        return _xxh3(key.encode("utf-8", "surrogatepass"))
    return _xxh3(canonical_key_bytes(key))


def assign_to_key_group(key: Any, max_parallelism: int) -> int:
    """The key group of ``key``: a number in ``[0, max_parallelism)``."""
    return stable_key_hash(key) % max_parallelism


def compute_operator_index_for_key_group(max_parallelism: int, parallelism: int, key_group: int) -> int:
    """The subtask that owns ``key_group`` when the operator runs ``parallelism`` subtasks."""
    return key_group * parallelism // max_parallelism


def assign_key_to_parallel_operator(key: Any, max_parallelism: int, parallelism: int) -> int:
    """The subtask that owns ``key``."""
    return compute_operator_index_for_key_group(
        max_parallelism, parallelism, assign_to_key_group(key, max_parallelism)
    )


def key_to_subtask_function(max_parallelism: int, parallelism: int) -> Callable[[Any], int]:
    """A one-argument ``key -> subtask`` function with the constants bound, for hot loops."""
    xxh3 = _xxh3
    canonical = canonical_key_bytes

    def subtask_of(key: Any) -> int:
        if type(key) is str:
            h = xxh3(key.encode("utf-8", "surrogatepass"))
        elif isinstance(key, str):
            h = xxh3(key.encode("utf-8", "surrogatepass"))
        else:
            h = xxh3(canonical(key))
        return (h % max_parallelism) * parallelism // max_parallelism

    return subtask_of


def compute_default_max_parallelism(parallelism: int) -> int:
    """Flink's default: 1.5 x parallelism rounded up to a power of two, within [128, 32768]."""
    wanted = parallelism + parallelism // 2
    power = 1 << max(wanted - 1, 0).bit_length()
    return min(max(power, DEFAULT_LOWER_BOUND_MAX_PARALLELISM), UPPER_BOUND_MAX_PARALLELISM)


class KeyGroupRange:
    """The contiguous, inclusive range of key groups one subtask owns."""

    __slots__ = ("end_key_group", "start_key_group")

    def __init__(self, start_key_group: int, end_key_group: int) -> None:
        if start_key_group < 0 or end_key_group < start_key_group - 1:
            raise ValueError(f"invalid key group range [{start_key_group}, {end_key_group}]")
        self.start_key_group = start_key_group
        self.end_key_group = end_key_group

    @classmethod
    def of_operator(cls, max_parallelism: int, parallelism: int, operator_index: int) -> KeyGroupRange:
        """Key groups owned by subtask ``operator_index`` (the inverse of the index computation)."""
        return compute_key_group_range_for_operator_index(max_parallelism, parallelism, operator_index)

    def contains(self, key_group: int) -> bool:
        return self.start_key_group <= key_group <= self.end_key_group

    def __contains__(self, key_group: object) -> bool:
        return isinstance(key_group, int) and self.contains(key_group)

    def __len__(self) -> int:
        return self.end_key_group - self.start_key_group + 1

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.start_key_group, self.end_key_group + 1))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, KeyGroupRange)
            and self.start_key_group == other.start_key_group
            and self.end_key_group == other.end_key_group
        )

    def __hash__(self) -> int:
        return hash((self.start_key_group, self.end_key_group))

    def __repr__(self) -> str:
        return f"KeyGroupRange(start={self.start_key_group}, end={self.end_key_group})"


def compute_key_group_range_for_operator_index(
    max_parallelism: int, parallelism: int, operator_index: int
) -> KeyGroupRange:
    """The key groups ``g`` with ``compute_operator_index_for_key_group(..., g) == operator_index``."""
    if not 0 < parallelism <= max_parallelism:
        raise ValueError(f"parallelism {parallelism} must be in [1, max parallelism {max_parallelism}]")
    if not 0 <= operator_index < parallelism:
        raise ValueError(f"operator index {operator_index} out of range for parallelism {parallelism}")
    start = (operator_index * max_parallelism + parallelism - 1) // parallelism
    end = ((operator_index + 1) * max_parallelism - 1) // parallelism
    return KeyGroupRange(start, end)


def unhashable_key_error(key: Any, cause: TypeError) -> TypeError:
    """The error for a key that cannot be a dict key, naming the fix."""
    return TypeError(
        f"key selector returned an unhashable key of type {type(key).__name__} ({cause}); "
        "keys must be hashable, e.g. a tuple instead of a list"
    )
