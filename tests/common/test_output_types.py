"""Declared output types as PyFlink's coders treat them where records leave Python (values as
measured on PyFlink 2.3's coders; the corpus programs output_type_* run the same cases end to end)."""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pytest

from flott.common import Configuration, Row, Types
from flott.common.type_conversion import OutputTypeMismatch, output_converter, output_type_check
from flott.errors import ConfigurationError


def _error(type_info: Any, value: Any) -> str:
    with pytest.raises(OutputTypeMismatch) as info:
        output_converter(type_info)(value)
    return f"{info.value.error_type.__name__}: {info.value.detail}"


@pytest.mark.parametrize(
    ("type_info", "value", "expected"),
    [
        (Types.INT(), "abc", "TypeError: an integer is required"),
        (Types.INT(), 2**31, "OverflowError: value too large to convert to int32_t"),
        (Types.BYTE(), 300, "OverflowError: value too large to convert to int8_t"),
        (Types.LONG(), 2**63, "OverflowError: Python int too large to convert to C long"),
        (Types.FLOAT(), "x", "TypeError: must be real number, not str"),
        (Types.BOOLEAN(), -1, "OverflowError: can't convert negative value to unsigned char"),
        (Types.STRING(), 5, "AttributeError: 'int' object has no attribute 'encode'"),
        (Types.TUPLE([Types.INT()]), [1], "TypeError: Expected tuple, got list"),
        (Types.TUPLE([Types.INT()]), Row(1), "TypeError: Expected tuple, got Row"),
        (Types.BASIC_ARRAY(Types.INT()), (1, 2), "TypeError: Expected list, got tuple"),
        (Types.PRIMITIVE_ARRAY(Types.INT()), [1, None], "TypeError: an integer is required"),
        (Types.PRIMITIVE_ARRAY(Types.BYTE()), "ab", "TypeError: expected bytes, str found"),
        (
            Types.ROW([Types.INT()]),
            (1,),
            "AttributeError: 'tuple' object has no attribute 'get_fields_by_names'",
        ),
        (
            Types.ROW([Types.INT(), Types.STRING()]),
            Row(1),
            "ValueError: 2 fields are required while 1 values are provided",
        ),
        (
            Types.MAP(Types.STRING(), Types.INT()),
            [1],
            "AttributeError: 'list' object has no attribute 'items'",
        ),
        (Types.SQL_DATE(), "2020-01-01", "AttributeError: 'str' object has no attribute 'toordinal'"),
    ],
)
def test_values_that_do_not_fit_fail_as_in_pyflink(type_info: Any, value: Any, expected: str) -> None:
    assert _error(type_info, value) == expected


@pytest.mark.parametrize(
    ("type_info", "value", "expected"),
    [
        (Types.FLOAT(), 3, 3.0),
        (Types.FLOAT(), 1.1, 1.100000023841858),
        (Types.DOUBLE(), decimal.Decimal("2.5"), 2.5),
        (Types.INT(), True, 1),
        (Types.INT(), -2.7, -2),
        (Types.BOOLEAN(), 5, True),
        (Types.BIG_DEC(), 1.5, decimal.Decimal("1.5")),
        (Types.SQL_DATE(), datetime.datetime(2024, 5, 6, 7, 8), datetime.date(2024, 5, 6)),
        (Types.PRIMITIVE_ARRAY(Types.BYTE()), bytearray(b"hi"), b"hi"),
        (Types.BASIC_ARRAY(Types.INT()), [1, None], [1, None]),
        (Types.TUPLE([Types.STRING(), Types.FLOAT()]), ("k", 4, "extra"), ("k", 4.0)),
    ],
)
def test_values_are_converted_as_java_hands_them_back(type_info: Any, value: Any, expected: Any) -> None:
    out = output_converter(type_info)(value)
    assert out == expected and type(out) is type(expected)


def test_rows_take_the_declared_names_and_arity() -> None:
    row = output_converter(Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()]))(
        Row(True, "a", "x")
    )
    assert row.id == 1 and row.name == "a" and repr(row) == "Row(id=1, name='a')"
    reordered = output_converter(Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()]))(
        Row(name="b", id=2)
    )
    assert list(reordered) == [2, "b"]


def test_maps_come_back_in_java_hashmap_order() -> None:
    out = output_converter(Types.MAP(Types.STRING(), Types.INT()))({"b": 2, "a": 1, "Aa": 3, "zz": 5})
    assert list(out) == ["Aa", "zz", "a", "b"]  # as PyFlink 2.3 returned it after a rebalance


def test_a_batch_that_fits_passes_without_a_copy() -> None:
    check = output_type_check(Types.TUPLE([Types.STRING(), Types.INT()]), none_allowed=False)
    assert check is not None
    batch = [("a", 1), ("b", 2)]
    assert check(batch) is batch
    converted = check([("a", 1), ("b", True)])
    assert converted == [("a", 1), ("b", 1)] and type(converted[1][1]) is int


NESTED = Types.TUPLE(
    [Types.STRING(), Types.TUPLE([Types.LONG(), Types.DOUBLE()]), Types.TUPLE([Types.BOOLEAN()])]
)


@pytest.mark.parametrize("timestamped", [False, True])
def test_nested_tuples_that_fit_pass_and_the_others_are_converted_or_refused(timestamped: bool) -> None:
    check = output_type_check(NESTED, none_allowed=False, timestamped=timestamped)
    assert check is not None

    def records(*values: Any) -> list[Any]:
        return [(v, 7) for v in values] if timestamped else list(values)

    batch = records(("a", (1, 2.5), (True,)), ("b", (-(2**40), 0.0), (False,)))
    assert check(batch) is batch
    # an int where DOUBLE is declared, a 2-tuple where a 1-tuple is: Java hands back 3.0 and (True,)
    assert check(records(("a", (1, 3), (True, 9)))) == records(("a", (1, 3.0), (True,)))
    with pytest.raises(OutputTypeMismatch) as info:
        check(records(("a", (1, 2.5), (True,)), ("a", [1, 2.5], (True,))))
    assert info.value.value == ("a", [1, 2.5], (True,))
    with pytest.raises(OutputTypeMismatch):
        check(records(("a", (2**63, 2.5), (True,))))


def test_timestamped_records_keep_their_timestamps() -> None:
    check = output_type_check(Types.DOUBLE(), none_allowed=False, timestamped=True)
    assert check is not None
    assert check([(1, 10), (2.5, 20)]) == [(1.0, 10), (2.5, 20)]


def test_none_passes_only_where_java_takes_null() -> None:
    strict = output_type_check(Types.INT(), none_allowed=False)
    assert strict is not None
    with pytest.raises(OutputTypeMismatch) as info:
        strict([1, None])
    assert info.value.value is None
    keyed = output_type_check(Types.INT(), none_allowed=True)
    assert keyed is not None and keyed([1, None]) == [1, None]


def test_undeclared_and_pickled_outputs_are_not_checked() -> None:
    assert output_type_check(None, none_allowed=False) is None
    assert output_type_check(Types.PICKLED_BYTE_ARRAY(), none_allowed=False) is None


@pytest.mark.parametrize(
    ("getter", "default"), [("get_integer", 1), ("get_float", 1.0), ("get_boolean", False)]
)
def test_a_value_that_does_not_parse_names_key_and_value(getter: str, default: Any) -> None:
    config = Configuration().set_string("my.key", "abc")
    with pytest.raises(ConfigurationError, match=r"Could not parse value 'abc' for key 'my.key'\."):
        getattr(config, getter)("my.key", default)


def test_the_environment_refuses_a_parallelism_that_is_not_a_number() -> None:
    from flott.datastream import StreamExecutionEnvironment

    config = Configuration().set_string("parallelism.default", "abc")
    expected = r"Could not parse value 'abc' for key 'parallelism\.default'"
    with pytest.raises(ConfigurationError, match=expected):
        StreamExecutionEnvironment.get_execution_environment(config)


def test_the_lazy_check_passes_fitting_records_and_converts_the_others() -> None:
    from flott.common.type_conversion import output_type_check_lazy

    check = output_type_check_lazy(Types.TUPLE([Types.STRING(), Types.INT()]), none_allowed=True)
    assert check is not None
    fitting = ("a", 1)
    out = list(check(iter([fitting, ("b", 1.7), None])))
    assert out[0] is fitting and out[1] == ("b", 1) and out[2] is None
    timestamped = output_type_check_lazy(Types.FLOAT(), none_allowed=False, timestamped=True)
    assert timestamped is not None
    assert list(timestamped([(1, 5)])) == [(1.0, 5)]
    assert output_type_check_lazy(Types.PICKLED_BYTE_ARRAY(), none_allowed=False) is None


def test_the_lazy_check_raises_what_on_mismatch_makes_of_the_mismatch() -> None:
    from flott.common.type_conversion import output_type_check_lazy

    seen: list[OutputTypeMismatch] = []

    def error(e: OutputTypeMismatch) -> Exception:
        seen.append(e)
        return ValueError(f"{e.error_type.__name__}: {e.detail} ({e.value!r})")

    check = output_type_check_lazy(Types.INT(), none_allowed=False, on_mismatch=error)
    assert check is not None
    with pytest.raises(ValueError, match=r"TypeError: an integer is required \('x'\)"):
        list(check(["x"]))
    with pytest.raises(ValueError, match="None record"):
        list(check([None]))
    assert [e.value for e in seen] == ["x", None]
