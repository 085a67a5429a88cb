"""key_by(key_selector, key_type): keys go through the declared type as PyFlink's key coder takes
them (the values below were measured on PyFlink 2.3; the corpus programs key_type_* run them end to
end on both systems)."""

from __future__ import annotations

from typing import Any

import cloudpickle
import pytest

from flott.common import Row, Types
from flott.common.type_conversion import DeclaredKeySelector, with_declared_key_type
from flott.datastream import KeySelector, StreamExecutionEnvironment
from flott.errors import UserCodeError
from flott.runtime.partitioner.key_group_stream_partitioner import KeyGroupStreamPartitioner


def _key(key_type: Any, key: Any) -> Any:
    selector = with_declared_key_type(lambda v: v, key_type)
    assert isinstance(selector, DeclaredKeySelector)
    return selector.get_key(key)


@pytest.mark.parametrize(
    ("key_type", "key", "expected"),
    [
        (Types.INT(), 1.5, 1),
        (Types.INT(), 1.7, 1),  # one key with 1.5: reduce and windows group them
        (Types.INT(), True, 1),
        (Types.FLOAT(), 1, 1.0),
        (Types.DOUBLE(), 2, 2.0),
        (Types.LONG(), 10**12, 10**12),
        (Types.STRING(), None, None),  # a Row field: null passes
        (Types.TUPLE([Types.STRING(), Types.FLOAT()]), ("k", 1), ("k", 1.0)),
    ],
)
def test_keys_are_converted_as_pyflink_converts_them(key_type: Any, key: Any, expected: Any) -> None:
    got = _key(key_type, key)
    assert got == expected and type(got) is type(expected)


def test_a_positional_row_key_takes_the_declared_names() -> None:
    got = _key(Types.ROW_NAMED(["id", "n"], [Types.INT(), Types.STRING()]), Row(1, "a"))
    assert got.as_dict() == {"id": 1, "n": "a"}


@pytest.mark.parametrize(
    ("key_type", "key", "error"),
    [
        (Types.STRING(), 1, "AttributeError: 'int' object has no attribute 'encode'"),
        (Types.INT(), "x", "TypeError: an integer is required"),
        (Types.INT(), 1 << 40, "OverflowError: value too large to convert to int32_t"),
        (Types.TUPLE([Types.STRING(), Types.INT()]), ["1", 1], "TypeError: Expected tuple, got list"),
    ],
)
def test_keys_that_do_not_fit_fail_with_pyflinks_error(key_type: Any, key: Any, error: str) -> None:
    with pytest.raises(UserCodeError) as raised:
        _key(key_type, key)
    assert str(raised.value).startswith(error)
    assert "key_by" in str(raised.value) and repr(key) in str(raised.value)
    assert raised.value.traceback == ""  # the user's mistake, not a frame of theirs


def test_no_or_pickled_key_type_keeps_the_selector() -> None:
    def selector(v: Any) -> Any:
        return v

    assert with_declared_key_type(selector, None) is selector
    assert with_declared_key_type(selector, Types.PICKLED_BYTE_ARRAY()) is selector
    with pytest.raises(TypeError, match="TypeInformation"):
        with_declared_key_type(selector, "STRING")


def test_key_selector_objects_are_opened_closed_and_pickled_without_the_converter() -> None:
    class Field(KeySelector):
        opened = closed = 0

        def open(self, runtime_context: Any) -> None:
            self.opened += 1

        def close(self) -> None:
            self.closed += 1

        def get_key(self, value: Any) -> Any:
            return value[0]

    wrapped = with_declared_key_type(Field(), Types.FLOAT())
    assert wrapped.get_key((3, "x")) == 3.0
    copy = cloudpickle.loads(cloudpickle.dumps(wrapped))
    assert copy._convert is None and copy.get_key((4, "y")) == 4.0
    copy.open(None)
    copy.close()
    assert (copy.key_selector.opened, copy.key_selector.closed) == (1, 1)


def test_one_consumer_still_checks_every_key() -> None:
    partitioner = KeyGroupStreamPartitioner(with_declared_key_type(lambda v: v, Types.STRING()).get_key, 128)
    partitioner.setup(1)
    assert partitioner.single_channel is None  # the record writer runs distribute, so the key
    buffers: list[list[Any]] = [[]]
    partitioner.distribute(["a"], buffers)
    assert buffers == [["a"]]
    with pytest.raises(UserCodeError, match="encode"):
        partitioner.distribute([1], buffers)


def test_key_by_uses_the_converted_key_on_both_sides_of_the_shuffle() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    keyed = env.from_collection([1.5]).key_by(lambda x: x, key_type=Types.INT())
    selector = keyed._transformation.key_selector
    assert isinstance(selector, DeclaredKeySelector) and selector.get_key(1.5) == 1
