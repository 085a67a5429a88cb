"""Row behaves as PyFlink's: access by position/name/attribute, row classes, equality, pickling."""

from __future__ import annotations

import pickle

import cloudpickle
import pytest

from flott.common import Row, RowKind


def test_positional_and_named_access():
    r = Row(name="Alice", age=11)
    assert r[0] == "Alice" and r[1] == 11
    assert r["name"] == "Alice" and r.age == 11
    assert r[0:2] == ["Alice", 11]
    assert len(r) == 2 and list(r) == ["Alice", 11]
    assert "name" in r and "wrong" not in r
    assert repr(r) == "Row(name='Alice', age=11)"  # keyword order kept, as PyFlink >= 1.13
    with pytest.raises(AttributeError):
        _ = r.missing
    with pytest.raises(ValueError):
        _ = r["missing"]


def test_unnamed_row():
    r = Row(1, "a", None)
    assert r[1] == "a"
    assert 1 in r
    assert repr(r) == "<Row(1, 'a', None)>"
    with pytest.raises(AttributeError):
        _ = r.x
    with pytest.raises(KeyError):
        _ = r["x"]


def test_row_class_call():
    Person = Row("name", "age")
    assert repr(Person) == "<Row('name', 'age')>"
    p = Person("Bob", 3)
    assert p == Row(name="Bob", age=3)
    assert p.name == "Bob"
    with pytest.raises(ValueError):
        Person(1, 2, 3)


def test_set_and_mutate():
    r = Row(a=1, b=2)
    r["a"] = 10
    r[1] = 20
    assert r.as_dict() == {"a": 10, "b": 20}
    with pytest.raises(AttributeError):
        r.a = 5  # attribute assignment is refused, as in PyFlink
    r.set_field_names(["x", "y"])
    assert r.x == 10
    with pytest.raises(ValueError):
        Row(1, a=2)


def test_as_dict_recursive():
    r = Row(key=1, value=Row(name="a", age=2), items=[Row(z=1)])
    assert r.as_dict() == {"key": 1, "value": Row(name="a", age=2), "items": [Row(z=1)]}
    assert r.as_dict(True) == {"key": 1, "value": {"name": "a", "age": 2}, "items": [{"z": 1}]}
    with pytest.raises(TypeError):
        Row(1, 2).as_dict()


def test_row_kind():
    r = Row(1)
    assert r.get_row_kind() is RowKind.INSERT
    r.set_row_kind(RowKind.DELETE)
    assert r.get_row_kind() is RowKind.DELETE
    assert str(RowKind.UPDATE_BEFORE) == "-U" and str(RowKind.UPDATE_AFTER) == "+U"
    assert Row.of_kind(RowKind.DELETE, 1) == r


def test_equality_and_hash():
    assert Row(1, 2) == Row(1, 2)
    assert Row(1, 2) != Row(2, 1)
    assert Row(a=1, b=2) == Row(b=2, a=1)  # named rows compare by name
    assert hash(Row(a=1, b=2)) == hash(Row(b=2, a=1))
    assert Row(a=1) != Row(1)
    assert Row(1) != Row.of_kind(RowKind.DELETE, 1)
    assert Row(1) != (1,)
    assert len({Row(1, "x"), Row(1, "x"), Row(2, "x")}) == 2


def test_get_fields_by_names():
    r = Row(a=1, b=2, c=3)
    assert r.get_fields_by_names(["c", "a"]) == [3, 1]
    with pytest.raises(Exception, match="not exist"):
        r.get_fields_by_names(["zz"])


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps])
def test_pickling_keeps_names_and_kind(dumps):
    r = Row.of_kind(RowKind.UPDATE_AFTER, name="x", n=[1, 2])
    r2 = pickle.loads(dumps(r))
    assert r2 == r and r2.name == "x" and r2.get_row_kind() is RowKind.UPDATE_AFTER
    u = pickle.loads(dumps(Row(1, None)))
    assert u == Row(1, None) and repr(u) == "<Row(1, None)>"
