"""``TableDescriptor``: a connector table declared in Python, as CREATE TABLE ... WITH declares it."""

from __future__ import annotations

from typing import Any

from flott.errors import NotYetSupportedError
from flott.table.schema import Schema

__all__ = ["FormatDescriptor", "TableDescriptor"]


class FormatDescriptor:
    def __init__(self, format: str, options: dict[str, str]) -> None:
        self.format, self.opts = format, options

    @staticmethod
    def for_format(format: str) -> FormatDescriptor.Builder:
        return FormatDescriptor.Builder(format)

    class Builder:
        def __init__(self, format: str) -> None:
            self._format = format
            self._options: dict[str, str] = {}

        def option(self, key: str, value: Any) -> FormatDescriptor.Builder:
            self._options[key] = str(value)
            return self

        def build(self) -> FormatDescriptor:
            return FormatDescriptor(self._format, self._options)


class TableDescriptor:
    def __init__(
        self,
        connector: str,
        schema: Schema | None,
        options: dict[str, str],
        partition_keys: list[str] | None = None,
    ) -> None:
        self.connector = connector
        self.partition_keys = list(partition_keys or [])
        self.schema = schema if schema is not None else Schema([], [])
        self._options = options

    def options(self) -> dict[str, str]:
        return dict(self._options, connector=self.connector)

    def get_options(self) -> dict[str, str]:
        return self.options()

    def get_schema(self) -> Schema:
        return self.schema

    @staticmethod
    def for_connector(connector: str) -> TableDescriptor.Builder:
        return TableDescriptor.Builder(connector)

    def __str__(self) -> str:
        opts = ",\n".join(f"  '{k}' = '{v}'" for k, v in self.options().items())
        return f"{self.schema}\nWITH (\n{opts}\n)"

    class Builder:
        def __init__(self, connector: str) -> None:
            self._connector = connector
            self._schema: Schema | None = None
            self._options: dict[str, str] = {}
            self._partition_keys: list[str] = []

        def schema(self, schema: Schema) -> TableDescriptor.Builder:
            self._schema = schema
            return self

        def option(self, key: Any, value: Any) -> TableDescriptor.Builder:
            self._options[str(key)] = "true" if value is True else "false" if value is False else str(value)
            return self

        def format(self, format: Any, format_option: Any = None) -> TableDescriptor.Builder:
            if isinstance(format, FormatDescriptor):
                self._options["format"] = format.format
                for k, v in format.opts.items():
                    self._options[f"{format.format}.{k}"] = v
            else:
                self._options["format"] = str(format)
            return self

        def comment(self, comment: str) -> TableDescriptor.Builder:
            return self

        def partitioned_by(self, *partition_keys: str) -> TableDescriptor.Builder:
            """PARTITIONED BY (the filesystem connector's k=v directories)."""
            self._partition_keys = list(partition_keys)
            return self

        def distributed_by(self, *args: Any) -> TableDescriptor.Builder:
            raise NotYetSupportedError("distributed tables are not yet supported")

        def build(self) -> TableDescriptor:
            return TableDescriptor(
                self._connector, self._schema, dict(self._options), self._partition_keys
            )
