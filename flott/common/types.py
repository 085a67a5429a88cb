"""``Row`` and ``RowKind``: PyFlink's row record, with the same access, equality and repr.

Rows are what users put in declared ``Types.ROW`` streams and what they get
back from them, so user code written against PyFlink must behave identically:
``row[0]``, ``row['name']``, ``row.name``, ``Row('a', 'b')(1, 2)``, named rows
comparing by field name, and ``repr`` (undeclared records print with ``str``).
"""

from __future__ import annotations

from enum import Enum
from typing import Any

__all__ = ["Row", "RowKind"]


class RowKind(Enum):
    """The change a row describes in a changelog; ``str`` gives Flink's short form (``+I``...)."""

    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    def __str__(self) -> str:
        return _SHORT_STRINGS[self.value]

    def short_string(self) -> str:
        """Flink's ``RowKind.shortString()``, used by ``Row.toString``."""
        return _SHORT_STRINGS[self.value]

    def to_j_row_kind(self) -> str:
        """PyFlink converts to the Java enum here; flott has no JVM and returns the Java name."""
        return self.name


_SHORT_STRINGS = ("+I", "-U", "+U", "-D")

_ROW_SLOTS = frozenset(("_fields", "_from_dict", "_row_kind", "_values"))


def _create_row(fields: list[str] | None, values: Any, row_kind: RowKind | None = None) -> Row:
    """Rebuild a row (pickling entry point; keeps the pickle independent of attribute layout)."""
    row = Row(*values)
    if fields is not None:
        row._fields = list(fields)
    if row_kind is not None:
        row._row_kind = row_kind
    return row


class Row:
    """A record with positional and (optionally) named fields, and a RowKind.

    ``Row(a=1, b=2)`` keeps keyword order (PyFlink >= 1.13 does not sort names);
    ``Row('a', 'b')`` builds a "row class" whose call creates named rows.
    """

    _fields: list[str]
    _values: list[Any]
    _row_kind: RowKind
    _from_dict: bool

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError("Can not use both args and kwargs to create Row")
        d = self.__dict__
        if kwargs:
            d["_fields"] = list(kwargs)
            d["_values"] = list(kwargs.values())
            d["_from_dict"] = True
        else:
            d["_values"] = list(args)
            d["_from_dict"] = False
        d["_row_kind"] = RowKind.INSERT

    @staticmethod
    def of_kind(row_kind: RowKind, *args: Any, **kwargs: Any) -> Row:
        row = Row(*args, **kwargs)
        row._row_kind = row_kind
        return row

    def as_dict(self, recursive: bool = False) -> dict[str, Any]:
        """Field name → value; ``recursive`` also converts nested rows (inside lists/dicts too)."""
        fields = self.__dict__.get("_fields")
        if fields is None:
            raise TypeError("Cannot convert a Row class into dict")
        if not recursive:
            return dict(zip(fields, self._values, strict=False))

        def conv(obj: Any) -> Any:
            if isinstance(obj, Row):
                return obj.as_dict(True)
            if isinstance(obj, list):
                return [conv(o) for o in obj]
            if isinstance(obj, dict):
                return {k: conv(v) for k, v in obj.items()}
            return obj

        return {k: conv(v) for k, v in zip(fields, self._values, strict=False)}

    def get_row_kind(self) -> RowKind:
        return self._row_kind

    def set_row_kind(self, row_kind: RowKind) -> None:
        self._row_kind = row_kind

    def set_field_names(self, field_names: list[str]) -> None:
        self._fields = list(field_names)

    def get_fields_by_names(self, names: list[str]) -> list[Any]:
        """Values in the order of ``names`` (all values if the row is unnamed)."""
        fields = self.__dict__.get("_fields")
        if fields is None or names == fields:
            return self._values
        missing = [n for n in names if n not in fields]
        if missing:
            raise Exception(f"Field names {missing} not exist in {fields}.")
        return [self._values[fields.index(n)] for n in names]

    def _is_retract_msg(self) -> bool:
        return self._row_kind in (RowKind.UPDATE_BEFORE, RowKind.DELETE)

    def _is_accumulate_msg(self) -> bool:
        return self._row_kind in (RowKind.UPDATE_AFTER, RowKind.INSERT)

    def __contains__(self, item: Any) -> bool:
        fields = self.__dict__.get("_fields")
        return item in (fields if fields is not None else self._values)

    def __call__(self, *args: Any) -> Row:
        """Use this row's values as field names: ``Row('a', 'b')(1, 2) == Row(a=1, b=2)``."""
        if len(args) > len(self):
            raise ValueError(
                f"Can not create Row with fields {self}, expected {len(self)} values but got {args}"
            )
        return _create_row(list(self._values), args, self._row_kind)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, (int, slice)):
            return self._values[item]
        fields = self.__dict__.get("_fields")
        if fields is None:
            raise KeyError(item)
        try:
            return self._values[fields.index(item)]
        except ValueError:
            raise ValueError(item) from None
        except IndexError:
            raise KeyError(item) from None

    def __setitem__(self, key: Any, value: Any) -> None:
        if isinstance(key, (int, slice)):
            self._values[key] = value
            return
        fields = self.__dict__.get("_fields")
        if fields is None:
            raise KeyError(key)
        try:
            self._values[fields.index(key)] = value
        except ValueError:
            raise ValueError(value) from None
        except IndexError:
            raise KeyError(key) from None

    def __getattr__(self, item: str) -> Any:
        # Only called when normal lookup fails, i.e. for field names.
        if item.startswith("_"):
            raise AttributeError(item)
        fields = self.__dict__.get("_fields")
        if fields is None:
            raise AttributeError(item)
        try:
            return self._values[fields.index(item)]
        except (ValueError, IndexError):
            raise AttributeError(item) from None

    def __setattr__(self, key: str, value: Any) -> None:
        if key not in _ROW_SLOTS:
            raise AttributeError(key)
        self.__dict__[key] = value

    def __reduce__(self) -> tuple[Any, ...]:
        return _create_row, (self.__dict__.get("_fields"), tuple(self._values), self._row_kind)

    def __repr__(self) -> str:
        fields = self.__dict__.get("_fields")
        if fields is not None:
            inner = ", ".join(f"{k}={v!r}" for k, v in zip(fields, self._values, strict=False))
            return f"Row({inner})"
        return "<Row({})>".format(", ".join(repr(v) for v in self._values))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Row) or self.__class__ is not other.__class__:
            return False
        if self._row_kind != other._row_kind:
            return False
        mine = self.__dict__.get("_fields")
        theirs = other.__dict__.get("_fields")
        if mine is None or theirs is None:
            return mine is None and theirs is None and self._values == other._values
        if mine == theirs:
            return self._values == other._values
        # Named rows compare as name → value mappings, whatever the field order.
        if sorted(mine) != sorted(theirs):
            return False
        return all(self._values[mine.index(name)] == other._values[theirs.index(name)] for name in mine)

    def __hash__(self) -> int:
        fields = self.__dict__.get("_fields")
        if fields is None or len(fields) != len(self._values):
            return hash(tuple(self._values))
        # Consistent with __eq__: equal named rows may list their fields in another order.
        order = sorted(range(len(fields)), key=fields.__getitem__)
        return hash(tuple(self._values[i] for i in order))

    def __iter__(self) -> Any:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)
