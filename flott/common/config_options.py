"""``ConfigOptions.key(...).int_type().default_value(...)``: typed configuration keys.

A ``ConfigOption`` names a key, its type and default; :class:`Configuration`
stores strings, and the option converts on read, so the same option object works
on the client and on a TaskExecutor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["ConfigOption", "ConfigOptions"]

T = TypeVar("T")


def _parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    raise ValueError(f"Could not parse value '{text}' for a boolean option.")


def _parse_int(text: str) -> int:
    return int(text.strip())


def _parse_float(text: str) -> float:
    return float(text.strip())


class ConfigOption(Generic[T]):
    """A configuration key with a type (a parser from the stored string) and a default."""

    def __init__(
        self,
        key: str,
        parser: Callable[[str], T],
        default_value: T | None = None,
        description: str = "",
        fallback_keys: tuple[str, ...] = (),
    ) -> None:
        self._key = key
        self._parser = parser
        self._default = default_value
        self._description = description
        self._fallback_keys = fallback_keys

    def key(self) -> str:
        return self._key

    def default_value(self) -> T | None:
        return self._default

    def has_default_value(self) -> bool:
        return self._default is not None

    def parse(self, text: str) -> T:
        return self._parser(text)

    def with_description(self, description: str) -> ConfigOption[T]:
        return ConfigOption(self._key, self._parser, self._default, description, self._fallback_keys)

    def with_fallback_keys(self, *keys: str) -> ConfigOption[T]:
        return ConfigOption(self._key, self._parser, self._default, self._description, tuple(keys))

    def fallback_keys(self) -> tuple[str, ...]:
        return self._fallback_keys

    def __repr__(self) -> str:
        return f"ConfigOption(key={self._key!r}, default={self._default!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ConfigOption) and self._key == other._key and self._default == other._default

    def __hash__(self) -> int:
        return hash(self._key)


class ConfigOptions:
    """Entry point: ``ConfigOptions.key("name").string_type().default_value("x")``."""

    @staticmethod
    def key(key: str) -> ConfigOptions.OptionBuilder:
        if not key:
            raise ValueError("key must not be empty")
        return ConfigOptions.OptionBuilder(key)

    class OptionBuilder:
        def __init__(self, key: str) -> None:
            self._key = key

        def boolean_type(self) -> ConfigOptions.TypedConfigOptionBuilder[bool]:
            return ConfigOptions.TypedConfigOptionBuilder(self._key, _parse_bool)

        def int_type(self) -> ConfigOptions.TypedConfigOptionBuilder[int]:
            return ConfigOptions.TypedConfigOptionBuilder(self._key, _parse_int)

        def long_type(self) -> ConfigOptions.TypedConfigOptionBuilder[int]:
            return ConfigOptions.TypedConfigOptionBuilder(self._key, _parse_int)

        def float_type(self) -> ConfigOptions.TypedConfigOptionBuilder[float]:
            return ConfigOptions.TypedConfigOptionBuilder(self._key, _parse_float)

        def double_type(self) -> ConfigOptions.TypedConfigOptionBuilder[float]:
            return ConfigOptions.TypedConfigOptionBuilder(self._key, _parse_float)

        def string_type(self) -> ConfigOptions.TypedConfigOptionBuilder[str]:
            return ConfigOptions.TypedConfigOptionBuilder(self._key, str)

    class TypedConfigOptionBuilder(Generic[T]):
        def __init__(self, key: str, parser: Callable[[str], Any]) -> None:
            self._key = key
            self._parser = parser

        def default_value(self, value: T) -> ConfigOption[T]:
            return ConfigOption(self._key, self._parser, value)

        def no_default_value(self) -> ConfigOption[T]:
            return ConfigOption(self._key, self._parser, None)
