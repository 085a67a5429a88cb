"""What the JSON and CSV row schemas share: the row type's fields and building rows from values."""

from __future__ import annotations

from typing import Any

from flott.common.typeinfo import RowTypeInfo
from flott.common.types import Row
from flott.errors import ConfigurationError


def row_fields(type_info: Any, what: str) -> tuple[list[str], list[Any]]:
    """Field names and types of a row type (``Types.ROW_NAMED`` / ``Types.ROW``)."""
    if not isinstance(type_info, RowTypeInfo):
        raise ConfigurationError(
            f"{what}: the type info must be a row type (Types.ROW_NAMED), got {type_info!r}"
        )
    return list(type_info.get_field_names()), list(type_info.get_field_types())


def make_row(names: list[str], values: list[Any]) -> Row:
    row = Row(*values)
    row.set_field_names(names)
    return row


def row_values(element: Any, names: list[str]) -> list[Any]:
    """The field values of a Row, tuple, list or dict, in the row type's order."""
    if isinstance(element, dict):
        return [element.get(n) for n in names]
    if isinstance(element, Row | tuple | list):
        values = list(element)
        if len(values) != len(names):
            raise ValueError(f"a row of {len(values)} fields for a row type of {len(names)}: {element!r}")
        return values
    raise ValueError(f"not a row: {element!r}")
