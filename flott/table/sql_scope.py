"""What a SELECT's expressions can name: the columns of its FROM clause, by position."""

from __future__ import annotations

from typing import Any

__all__ = ["Scope"]


class Scope:
    """The columns a SELECT sees: (table alias, column name, type) by position."""

    def __init__(self, columns: list[tuple[str, str, Any]]) -> None:
        self.columns = columns
