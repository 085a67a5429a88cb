"""``Schema`` (the builder users declare tables with) and ``TableSchema`` (what get_schema() prints)."""

from __future__ import annotations

from typing import Any

from flott.errors import NotYetSupportedError
from flott.table.types import DataType, RowType

__all__ = ["ResolvedSchema", "Schema", "TableSchema"]


class TableSchema:
    """Column names and types; ``str`` is Flink's ``root`` tree (``|-- a: BIGINT``)."""

    def __init__(
        self, field_names: list[str], data_types: list[DataType], expressions: dict[str, str] | None = None
    ) -> None:
        self._names = list(field_names)
        self._types = list(data_types)
        self._expressions = dict(expressions or {})  # computed columns: name -> `quoted` SQL text

    def get_field_names(self) -> list[str]:
        return list(self._names)

    def get_field_data_types(self) -> list[DataType]:
        return list(self._types)

    def get_field_data_type(self, field: int | str) -> DataType | None:
        if isinstance(field, str):
            return self._types[self._names.index(field)] if field in self._names else None
        return self._types[field]

    def get_field_count(self) -> int:
        return len(self._names)

    def get_column_names(self) -> list[str]:
        return self.get_field_names()

    def get_column_count(self) -> int:
        return len(self._names)

    def __str__(self) -> str:
        exprs = self._expressions
        return "root\n" + "".join(
            f" |-- {n}: {t}" + (f" AS {exprs[n]}" if n in exprs else "") + "\n"
            for n, t in zip(self._names, self._types, strict=True)
        )

    def __repr__(self) -> str:
        return str(self)


class ResolvedSchema(TableSchema):
    """The resolved schema of a table; ``str`` is Flink's column list (what ``print_schema`` prints)."""

    def __str__(self) -> str:
        cols = ",\n".join(f"  `{n}` {t}" for n, t in zip(self._names, self._types, strict=True))
        return f"(\n{cols}\n)"


class Schema:
    """A table's declared columns (physical columns; watermarks are refused until event time is planned)."""

    def __init__(
        self, names: list[str], types: list[DataType], declared: list[tuple[str, str | None]] | None = None
    ) -> None:
        self.names, self.types = names, types
        # every column in declared order: (name, SQL expression of a computed column or None)
        self.declared = declared if declared is not None else [(n, None) for n in names]
        self.primary_key: list[str] | None = None
        self.metadata: dict[str, tuple[str, bool]] = {}  # column -> (metadata key, VIRTUAL)

    @staticmethod
    def new_builder() -> Schema.Builder:
        return Schema.Builder()

    def __str__(self) -> str:
        cols = ",\n".join(f"  `{n}` {t}" for n, t in zip(self.names, self.types, strict=True))
        return f"(\n{cols}\n)"

    class Builder:
        def __init__(self) -> None:
            self._names: list[str] = []
            self._types: list[DataType] = []
            self._computed: list[tuple[str, str]] = []
            self._order: list[str] = []
            self._primary_key: list[str] | None = None
            self._metadata: dict[str, tuple[str, bool]] = {}

        def from_schema(self, schema: Schema) -> Schema.Builder:
            self._names += schema.names
            self._types += schema.types
            self._order += [n for n, _ in schema.declared]
            self._computed += [(n, e) for n, e in schema.declared if e is not None]
            return self

        def from_row_data_type(self, data_type: RowType) -> Schema.Builder:
            self._names += data_type.field_names()
            self._types += data_type.field_types()
            return self

        def from_fields(self, field_names: list[str], field_data_types: list[DataType]) -> Schema.Builder:
            self._names += field_names
            self._types += field_data_types
            return self

        def column(self, column_name: str, data_type: Any) -> Schema.Builder:
            if isinstance(data_type, str):
                from flott.table.sql_types import parse_type

                data_type = parse_type(data_type)
            self._names.append(column_name)
            self._types.append(data_type)
            self._order.append(column_name)
            return self

        def column_by_expression(self, column_name: str, expr: Any) -> Schema.Builder:
            """A computed column, evaluated per row from the physical ones (SQL text, as in Flink)."""
            if not isinstance(expr, str):
                raise NotYetSupportedError(
                    "column_by_expression with a Table API expression is not yet supported (give SQL text)"
                )
            self._computed.append((column_name, expr))
            self._order.append(column_name)
            return self

        def column_by_metadata(
            self, column_name: str, data_type: Any, metadata_key: str | None = None, is_virtual: bool = False
        ) -> Schema.Builder:
            """A metadata column (kafka tables: ``topic``, ``partition``, ``offset``, ``timestamp``...);
            the key defaults to the column's name."""
            self.column(column_name, data_type)
            self._metadata[column_name] = (metadata_key or column_name, is_virtual)
            return self

        def watermark(self, column_name: str, watermark_expr: Any) -> Schema.Builder:
            raise NotYetSupportedError("Schema watermarks (event time) are not yet supported")

        def primary_key(self, *column_names: str) -> Schema.Builder:
            """A PRIMARY KEY ... NOT ENFORCED (upsert-kafka's message key; other connectors refuse it)."""
            if self._primary_key is not None:
                raise ValueError("Multiple primary keys are not supported.")
            self._primary_key = list(column_names)
            return self

        def primary_key_named(self, constraint_name: str, *column_names: str) -> Schema.Builder:
            return self.primary_key(*column_names)

        def build(self) -> Schema:
            computed = dict(self._computed)
            order = self._order + [n for n in self._names if n not in self._order]
            declared = [(n, computed.get(n)) for n in order]
            schema = Schema(list(self._names), list(self._types), declared)
            schema.primary_key, schema.metadata = self._primary_key, dict(self._metadata)
            return schema
