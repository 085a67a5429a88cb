"""The schema-driven encoding of typed streams' batches: what the consumer decodes is what pickle
would have handed it (same values, same classes), and what the schema does not cover stays pickle."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from flott.common import Row, Types
from flott.common.type_conversion import output_type_check
from flott.runtime.io.network.protocol import serialize
from flott.runtime.io.network.record_codec import TYPED, deserialize, schema_of, typed_encoder


def same(a: Any, b: Any) -> bool:
    """Equal and of the same class, all the way down (what an operator could tell apart)."""
    if type(a) is not type(b):
        return False
    if type(a) is tuple:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is float and a != a:
        return b != b
    return bool(a == b)


CASES: list[tuple[str, Any, list[Any]]] = [
    ("STRING", Types.STRING(), ["", "a", "ünïcødé 😀", "x" * 10_000, None]),
    ("CHAR", Types.CHAR(), ["a", "z"]),
    ("BOOLEAN", Types.BOOLEAN(), [True, False]),
    ("BYTE", Types.BYTE(), [-128, 0, 127]),
    ("SHORT", Types.SHORT(), [-(2**15), 2**15 - 1]),
    ("INT", Types.INT(), [-(2**31), 0, 2**31 - 1]),
    ("LONG", Types.LONG(), [-(2**63), 2**63 - 1, 1 << 40]),
    ("BIG_INT", Types.BIG_INT(), [-(2**63), 2**63 - 1, None]),
    ("DOUBLE", Types.DOUBLE(), [0.0, -0.0, 1e308, float("inf"), float("-inf"), float("nan"), 0.1]),
    ("FLOAT", Types.FLOAT(), [0.5, -1.25, float("inf")]),
    ("TUPLE", Types.TUPLE([Types.STRING(), Types.INT()]), [("word", 1), ("", -5)]),
    (
        "nested TUPLE",
        Types.TUPLE(
            [Types.STRING(), Types.TUPLE([Types.LONG(), Types.TUPLE([Types.BOOLEAN(), Types.DOUBLE()])])]
        ),
        [("a", (1, (True, 2.5))), ("b", (-(2**63), (False, -0.0)))],
    ),
    ("1-TUPLE", Types.TUPLE([Types.INT()]), [(1,), (2,)]),
]


@pytest.mark.parametrize("keyed", [False, True])
@pytest.mark.parametrize("timestamped", [False, True])
@pytest.mark.parametrize(("name", "type_info", "values"), CASES, ids=[c[0] for c in CASES])
def test_checked_batches_round_trip_as_pickle_would(
    name: str, type_info: Any, values: list[Any], keyed: bool, timestamped: bool
) -> None:
    """Every covered type, through the declared type's check first (as on a task's output); a
    keyed edge (or a type Flink writes null for) carries None records."""
    none_allowed = keyed or None in values
    values = [v for v in values if v is not None] + ([None] if none_allowed else [])
    stamps = [None, 0, -1, 2**62] * len(values)
    batch = [(v, stamps[i]) for i, v in enumerate(values)] if timestamped else values
    check = output_type_check(type_info, none_allowed=none_allowed, timestamped=timestamped)
    assert check is not None
    checked = check(batch)
    encode = typed_encoder(type_info, none_allowed=none_allowed, timestamped=timestamped, fallback=serialize)
    assert encode is not None, f"{name} should be covered"
    payload = encode(checked)
    assert payload[0] == TYPED, "the typed way, not the pickle fallback"
    decoded = deserialize(payload)
    assert type(decoded) is list
    via_pickle = pickle.loads(serialize(checked))
    assert len(decoded) == len(via_pickle)
    for got, expected in zip(decoded, via_pickle, strict=True):
        assert same(got, expected), (got, expected)


def test_ints_beyond_64_bits_fall_back_to_pickle() -> None:
    """A BIG_INT msgpack cannot carry: the batch goes as a pickle and still arrives whole."""
    encode = typed_encoder(Types.BIG_INT(), none_allowed=True, timestamped=False, fallback=serialize)
    assert encode is not None
    batch = [1, 2**64 + 1, -(2**100), None]
    payload = encode(batch)
    assert payload[0] == 0x80
    assert deserialize(payload) == batch
    fits = [2**64 - 1, -(2**63)]
    assert deserialize(encode(fits)) == fits and encode(fits)[0] == TYPED


@pytest.mark.parametrize(
    "type_info",
    [
        Types.ROW([Types.INT(), Types.STRING()]),
        Types.ROW_NAMED(["a"], [Types.INT()]),
        Types.TUPLE([Types.STRING(), Types.ROW([Types.INT()])]),
        Types.LIST(Types.INT()),
        Types.MAP(Types.STRING(), Types.INT()),
        Types.SQL_DATE(),
        Types.BIG_DEC(),
        Types.PICKLED_BYTE_ARRAY(),
        Types.PRIMITIVE_ARRAY(Types.INT()),
    ],
    ids=repr,
)
def test_types_without_a_schema_keep_pickle(type_info: Any) -> None:
    assert schema_of(type_info, none_allowed=True, timestamped=False) is None
    assert typed_encoder(type_info, none_allowed=True, timestamped=False, fallback=serialize) is None


def test_pickled_payloads_still_decode() -> None:
    """Untyped streams and events: the decoder tells a pickle by its first byte."""
    batch = [Row(1, "a"), {"k": [1, 2]}, ("x", 1)]
    assert deserialize(serialize(batch)) == batch
    assert deserialize(memoryview(serialize(batch))) == batch


def test_schemas() -> None:
    pair = Types.TUPLE([Types.STRING(), Types.INT()])
    assert schema_of(pair, none_allowed=False, timestamped=False) == "t(s,i)"
    assert schema_of(pair, none_allowed=True, timestamped=True) == "@t(s,i)?"
    nested = Types.TUPLE([Types.DOUBLE(), Types.TUPLE([Types.BOOLEAN(), Types.LONG()])])
    assert schema_of(nested, none_allowed=False, timestamped=False) == "t(f,t(b,i))"
