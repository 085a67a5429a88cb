"""``Configuration``: string-valued key/value settings with PyFlink's typed getters and setters.

Values are stored as the strings Flink's ``Configuration.toMap()`` would show
(``true``, ``42``, Java's float text, base64 for bytes), so a configuration
round-trips through JSON/REST and the cluster's YAML without type drift.

A stored value that does not parse as the type asked for is Flink's ``IllegalArgumentException``
("Could not parse value 'abc' for key 'parallelism.default'."): a
:class:`~flott.errors.ConfigurationError` naming the key and the value, never a bare ``int()`` error.
"""

from __future__ import annotations

import base64
import builtins
from collections.abc import Iterator
from typing import Any

from flott.common.config_options import ConfigOption, _parse_bool
from flott.common.java_text import java_double_to_string, java_float_to_string
from flott.errors import ConfigurationError

__all__ = ["Configuration", "parse_config_value"]


def parse_config_value(key: str, text: str, parse: Any) -> Any:
    """``parse(text)``, or Flink's error for a value of ``key`` that does not parse."""
    try:
        return parse(text)
    except (ValueError, TypeError, ArithmeticError):
        raise ConfigurationError(f"Could not parse value '{text}' for key '{key}'.") from None


def _int(text: str) -> int:
    return int(text.strip())


def _float(text: str) -> float:
    return float(text.strip())


class Configuration:
    """A mutable mapping of configuration keys to string values."""

    def __init__(self, other: Configuration | None = None, j_configuration: Any = None) -> None:
        self._data: dict[str, str] = dict(other._data) if other is not None else {}

    @classmethod
    def from_dict(cls, map: dict[str, str]) -> Configuration:
        conf = cls()
        for key, value in map.items():
            conf._data[str(key)] = _to_config_string(value)
        return conf

    # --- strings ---------------------------------------------------------------------

    def get_string(self, key: str, default_value: str | None) -> str | None:
        return self._data.get(key, default_value)

    def set_string(self, key: str, value: str) -> Configuration:
        self._data[key] = value
        return self

    @staticmethod
    def parse_list_value(value: str) -> list[Any]:
        """A YAML list (``[a, b]``) or a ``;``-separated string, as Flink accepts list values."""
        if not value:
            return []
        import yaml

        try:
            parsed = yaml.safe_load(value)
        except yaml.YAMLError:
            parsed = None
        if isinstance(parsed, list):
            return parsed
        return value.split(";")

    # --- typed accessors ---------------------------------------------------------------

    def get_integer(self, key: str, default_value: int) -> int:
        text = self._data.get(key)
        return default_value if text is None else parse_config_value(key, text, _int)  # type: ignore[no-any-return]

    def set_integer(self, key: str, value: int) -> Configuration:
        self._data[key] = str(int(value))
        return self

    def get_boolean(self, key: str, default_value: bool) -> bool:
        text = self._data.get(key)
        return default_value if text is None else parse_config_value(key, text, _parse_bool)  # type: ignore[no-any-return]

    def set_boolean(self, key: str, value: bool) -> Configuration:
        self._data[key] = "true" if value else "false"
        return self

    def get_float(self, key: str, default_value: float) -> float:
        text = self._data.get(key)
        return float(default_value) if text is None else parse_config_value(key, text, _float)  # type: ignore[no-any-return]

    def set_float(self, key: str, value: float) -> Configuration:
        self._data[key] = java_float_to_string(value)
        return self

    def get_bytearray(self, key: str, default_value: bytearray) -> bytearray:
        text = self._data.get(key)
        if text is None:
            return default_value
        return bytearray(parse_config_value(key, text, lambda t: base64.b64decode(t, validate=True)))

    def set_bytearray(self, key: str, value: bytearray) -> Configuration:
        self._data[key] = base64.b64encode(bytes(value)).decode("ascii")
        return self

    def get(self, option: ConfigOption[Any], default_value: Any = None) -> Any:
        """The option's value parsed to its type; falls back to deprecated keys, then defaults."""
        for key in (option.key(), *option.fallback_keys()):
            text = self._data.get(key)
            if text is not None:
                return parse_config_value(key, text, option.parse)
        return default_value if default_value is not None else option.default_value()

    def set(self, option: ConfigOption[Any], value: Any) -> Configuration:
        self._data[option.key()] = _to_config_string(value)
        return self

    # --- whole-map operations ----------------------------------------------------------

    def key_set(self) -> builtins.set[str]:
        return set(self._data)

    def add_all_to_dict(self, target_dict: dict[str, Any]) -> None:
        target_dict.update(self._data)

    def add_all(self, other: Configuration, prefix: str | None = None) -> Configuration:
        if prefix is None:
            self._data.update(other._data)
        else:
            for key, value in other._data.items():
                self._data[prefix + key] = value
        return self

    def contains_key(self, key: str) -> bool:
        return key in self._data

    def to_dict(self) -> dict[str, str]:
        return dict(self._data)

    def remove_config(self, key: str) -> bool:
        return self._data.pop(key, None) is not None

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __deepcopy__(self, memodict: Any = None) -> Configuration:
        return Configuration(self)

    def __copy__(self) -> Configuration:
        return Configuration(self)

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Configuration) and self._data == other._data

    def __str__(self) -> str:
        return "{" + ", ".join(f"{k}={v}" for k, v in self._data.items()) + "}"

    def __repr__(self) -> str:
        return f"Configuration({self._data!r})"


def _to_config_string(value: Any) -> str:
    """How Flink renders a typed value into its string form."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return java_double_to_string(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (list, tuple)):
        return ";".join(_to_config_string(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k}:{_to_config_string(v)}" for k, v in value.items())
    to_millis = getattr(value, "to_millis", None)
    if callable(to_millis):  # flott Duration: Flink's duration syntax
        return f"{to_millis()} ms"
    return str(value)
