"""format_record: the text PyFlink's Java side prints for declared types, str() for undeclared."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from flott.common import Instant, Row, RowKind, Types, format_record
from flott.common.java_text import (
    java_double_to_string,
    java_float_to_string,
    set_java_number_style,
)
from flott.common.typeinfo import make_formatter


@pytest.fixture
def jdk19():
    previous = set_java_number_style("jdk19")
    yield
    set_java_number_style(previous)


def test_undeclared_uses_python_str():
    assert format_record(("a", 1), None) == "('a', 1)"
    assert format_record(1.0e16, None) == "1e+16"
    assert format_record(None, None) == "None"
    assert format_record(Row(a=1, b="x"), None) == "Row(a=1, b='x')"
    assert format_record(Row(1, "x"), None) == "<Row(1, 'x')>"
    assert format_record({"k": [1, 2]}, Types.PICKLED_BYTE_ARRAY()) == "{'k': [1, 2]}"


def test_tuple_has_no_spaces_and_formats_fields_recursively():
    t = Types.TUPLE([Types.STRING(), Types.INT()])
    assert format_record(("a", 1), t) == "(a,1)"
    assert format_record(["a", 1], t) == "(a,1)"
    inner = Types.TUPLE([Types.BOOLEAN(), Types.FLOAT()])
    nested = Types.TUPLE([Types.STRING(), inner, Types.LONG()])
    assert format_record(("k", (True, 0.1), 7), nested) == "(k,(true,0.1),7)"
    assert format_record(("k", None, None), nested) == "(k,null,null)"


def test_row_prints_kind_and_comma_space_list():
    r = Types.ROW([Types.STRING(), Types.INT()])
    assert format_record(("a", 1), r) == "+I[a, 1]"
    assert format_record(Row("a", 1), r) == "+I[a, 1]"
    assert format_record(Row.of_kind(RowKind.UPDATE_BEFORE, "a", 1), r) == "-U[a, 1]"
    assert format_record(Row.of_kind(RowKind.UPDATE_AFTER, "a", 1), r) == "+U[a, 1]"
    assert format_record(Row.of_kind(RowKind.DELETE, "a", None), r) == "-D[a, null]"


def test_row_named_takes_fields_by_name():
    r = Types.ROW_NAMED(["name", "age"], [Types.STRING(), Types.INT()])
    assert format_record(Row(age=3, name="bob"), r) == "+I[bob, 3]"
    assert format_record({"name": "amy", "age": 5}, r) == "+I[amy, 5]"
    assert format_record(("cid", 9), r) == "+I[cid, 9]"
    inner = Types.ROW([Types.DOUBLE(), Types.LIST(Types.INT())])
    nested = Types.ROW_NAMED(["k", "v"], [Types.STRING(), inner])
    assert format_record(Row(k="x", v=Row(0.5, [1, 2])), nested) == "+I[x, +I[0.5, [1, 2]]]"


def test_basic_types():
    assert format_record("héllo", Types.STRING()) == "héllo"
    assert format_record(None, Types.STRING()) == "null"
    for t in (Types.INT(), Types.LONG(), Types.SHORT(), Types.BYTE(), Types.BIG_INT()):
        assert format_record(-42, t) == "-42"
    assert format_record(True, Types.BOOLEAN()) == "true"
    assert format_record(False, Types.BOOLEAN()) == "false"
    assert format_record("x", Types.CHAR()) == "x"
    assert format_record(Decimal("1.50"), Types.BIG_DEC()) == "1.50"
    assert format_record(Decimal("1E+3"), Types.BIG_DEC()) == "1E+3"
    assert format_record(2**70, Types.BIG_INT()) == str(2**70)


def test_float_goes_through_float32():
    f = Types.FLOAT()
    assert format_record(1.1, f) == "1.1"
    assert format_record(0.1 + 0.2, f) == "0.3"
    assert format_record(0.3 + 0.6, f) == "0.9"  # rounded once, from the double sum
    assert format_record(0.90000004, f) == "0.90000004"
    assert format_record(3.14159265358979, f) == "3.1415927"
    assert format_record(1, f) == "1.0"
    assert format_record(1e10, f) == "1.0E10"
    assert format_record(1e-4, f) == "1.0E-4"
    assert format_record(1e-45, f) == "1.4E-45"
    assert format_record(3.4028235e38, f) == "3.4028235E38"
    assert format_record(1e39, f) == "Infinity"
    assert format_record(-0.0, f) == "-0.0"
    assert format_record(float("nan"), f) == "NaN"


def test_double_uses_java_exponent_form():
    d = Types.DOUBLE()
    assert format_record(0.1 + 0.2, d) == "0.30000000000000004"
    assert format_record(100.0, d) == "100.0"
    assert format_record(1, d) == "1.0"
    assert format_record(1e7, d) == "1.0E7"
    assert format_record(9999999.0, d) == "9999999.0"
    assert format_record(0.001, d) == "0.001"
    assert format_record(0.0001, d) == "1.0E-4"
    assert format_record(1.5e-5, d) == "1.5E-5"
    assert format_record(-2.5e20, d) == "-2.5E20"
    assert format_record(123456789.0, d) == "1.23456789E8"
    assert format_record(5e-324, d) == "4.9E-324"
    assert format_record(float("inf"), d) == "Infinity"
    assert format_record(float("-inf"), d) == "-Infinity"


def test_jdk17_prints_exact_digits_of_large_integral_values():
    # JDK <= 18 quirk (verified against OpenJDK 17): integral values < 2^63 print their exact digits.
    assert java_float_to_string(123456789.0) == "1.23456792E8"
    assert java_float_to_string(9204938554.384977) == "9.2049388E9"
    assert java_double_to_string(2.82879384806159e17) == "2.82879384806159008E17"


def test_jdk19_prints_shortest_digits(jdk19):
    assert java_float_to_string(123456789.0) == "1.2345679E8"
    assert java_double_to_string(2.82879384806159e17) == "2.82879384806159E17"
    assert java_double_to_string(2e23) == "2.0E23"


def test_collections():
    assert format_record([1, 2, 3], Types.LIST(Types.INT())) == "[1, 2, 3]"
    assert format_record([], Types.LIST(Types.INT())) == "[]"

    # Arrays are spelled out as fields of a tuple or row (StringUtils.arrayAwareToString) ...
    def as_field(value: object, array_type: object) -> str:
        return format_record((value,), Types.TUPLE([array_type]))[1:-1]  # type: ignore[list-item]

    assert as_field(["a", None], Types.BASIC_ARRAY(Types.STRING())) == "[a, null]"
    assert as_field([1.5, 2.0], Types.PRIMITIVE_ARRAY(Types.DOUBLE())) == "[1.5, 2.0]"
    assert as_field(b"\x01\xff", Types.PRIMITIVE_ARRAY(Types.BYTE())) == "[1, -1]"
    assert as_field([Row(1)], Types.OBJECT_ARRAY(Types.ROW([Types.INT()]))) == "[+I[1]]"
    # ... but a bare array prints Object.toString, its class and identity hash (as PyFlink's print).
    assert format_record([1.5], Types.PRIMITIVE_ARRAY(Types.DOUBLE())).startswith("[D@")
    assert format_record(["a"], Types.BASIC_ARRAY(Types.STRING())).startswith("[Ljava.lang.String;@")
    assert format_record([Row(1)], Types.OBJECT_ARRAY(Types.ROW([Types.INT()]))).startswith(
        "[Ljava.lang.Object;@"
    )
    with pytest.raises(TypeError):
        Types.PRIMITIVE_ARRAY(Types.STRING())


def test_map_prints_in_java_hashmap_order():
    m = Types.MAP(Types.STRING(), Types.INT())
    # Java: new HashMap<>(3) + puts b, a, zz -> {zz=3, a=2, b=1} (verified with OpenJDK 17).
    assert format_record({"b": 1, "a": 2, "zz": 3}, m) == "{zz=3, a=2, b=1}"
    assert format_record({}, m) == "{}"
    # 16 lands in bucket 0, 17 and 1 share bucket 1 (insertion order): verified with OpenJDK 17.
    ints = Types.MAP(Types.INT(), Types.STRING())
    assert format_record({17: "x", 1: "y", 16: "z"}, ints) == "{16=z, 17=x, 1=y}"


def test_time_types():
    assert format_record(dt.date(2021, 3, 4), Types.SQL_DATE()) == "2021-03-04"
    assert format_record(dt.time(5, 6, 7, 123), Types.SQL_TIME()) == "05:06:07"
    assert format_record(dt.datetime(2021, 1, 1, 12, 0), Types.SQL_TIMESTAMP()) == "2021-01-01 12:00:00.0"
    millis = dt.datetime(2021, 1, 1, 0, 0, 0, 123000)
    assert format_record(millis, Types.SQL_TIMESTAMP()) == "2021-01-01 00:00:00.123"
    assert format_record(Instant(1609459200, 0), Types.INSTANT()) == "2021-01-01T00:00:00Z"
    assert format_record(Instant(1609459200, 123000000), Types.INSTANT()) == "2021-01-01T00:00:00.123Z"
    assert format_record(Instant(0, 1000), Types.INSTANT()) == "1970-01-01T00:00:00.000001Z"


def test_make_formatter_is_cached_and_type_info_pickles_without_it():
    import pickle

    t = Types.ROW([Types.STRING(), Types.TUPLE([Types.INT(), Types.FLOAT()])])
    fmt = make_formatter(t)
    assert fmt is t.make_formatter()
    assert fmt(("a", (1, 2.5))) == "+I[a, (1,2.5)]"
    t2 = pickle.loads(pickle.dumps(t))
    assert t2 == t
    assert t2.make_formatter()(("a", (1, 2.5))) == "+I[a, (1,2.5)]"
    assert make_formatter(None) is str


def test_type_info_repr_and_equality():
    assert repr(Types.INT()) == "Integer"
    assert repr(Types.ROW([Types.STRING(), Types.INT()])) == "RowTypeInfo(String, Integer)"
    assert repr(Types.ROW_NAMED(["a"], [Types.LONG()])) == "RowTypeInfo(a: Long)"
    assert repr(Types.TUPLE([Types.INT()])) == "TupleTypeInfo(Integer)"
    map_type = Types.MAP(Types.STRING(), Types.LIST(Types.INT()))
    assert repr(map_type) == "MapTypeInfo<String, ListTypeInfo<Integer>>"
    assert Types.ROW([Types.INT()]) == Types.ROW([Types.INT()])
    assert Types.INT() != Types.LONG()
    assert hash(Types.LIST(Types.INT())) == hash(Types.LIST(Types.INT()))
    assert Types.ROW([Types.INT(), Types.STRING()]).get_field_names() == ["f0", "f1"]


def test_format_lines_joins_with_prefix_and_falls_back_for_non_strings():
    from flott.common.typeinfo import format_lines

    assert format_lines(["a", "b"], make_formatter(Types.STRING())) == "a\nb\n"
    assert format_lines(["a", None], make_formatter(Types.STRING())) == "a\nnull\n"
    assert format_lines(["a", 1], str) == "a\n1\n"
    tuple_fmt = make_formatter(Types.TUPLE([Types.STRING(), Types.INT()]))
    assert format_lines([("x", 1)], tuple_fmt, "2> ") == "2> (x,1)\n"
    assert format_lines(["a", "b"], str, "id> ") == "id> a\nid> b\n"


def test_batch_rendering_of_tuples_is_the_per_record_rendering():
    """Sinks render a whole batch of tuples in one generated comprehension (``format_lines``);
    whatever the records hold (nulls, wrong arity, other classes in a field, nested tuples),
    the text is what the per-record formatter gives."""
    from flott.common.typeinfo import format_lines

    cases = [
        (Types.TUPLE([Types.STRING(), Types.INT()]), [("a", 1), ("b", None), (None, 2), ("x", True)]),
        (Types.TUPLE([Types.STRING(), Types.INT()]), [("a", 1), None, ("a", 1, 2), ["l", 3]]),
        (Types.TUPLE([Types.BOOLEAN()]), [(True,), (False,), (None,)]),
        (
            Types.TUPLE([Types.BOOLEAN(), Types.TUPLE([Types.INT(), Types.STRING()])]),
            [(True, (1, "x")), (False, None)],
        ),
        (Types.TUPLE([Types.DOUBLE(), Types.LONG(), Types.STRING()]), [(1.5, 2, "s"), (1e20, 3, "ü")]),
    ]
    for type_info, records in cases:
        fmt = make_formatter(type_info)
        assert getattr(fmt, "lines", None) is not None
        expected = "".join(f"1> {fmt(r)}\n" for r in records)
        assert format_lines(records, fmt, "1> ") == expected
        assert format_lines(records, fmt) == "".join(f"{fmt(r)}\n" for r in records)
