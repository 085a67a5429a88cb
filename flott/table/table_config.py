"""``TableConfig``: the TableEnvironment's configuration; keys reach the job's StreamExecutionEnvironment."""

from __future__ import annotations

from typing import Any

from flott.datastream.stream_execution_environment import _configuration_dict
from flott.errors import NotYetSupportedError

__all__ = ["TableConfig"]

_UTC = frozenset({"UTC", "GMT", "Z", "Etc/UTC", "+00:00"})
"""The local time zones flott's Table runtime honours: it computes and prints times in UTC."""


def _check_table_option(key: str, value: str) -> None:
    """Never accept what is ignored: flott's planner reads no ``table.*`` option yet, so one set
    (``table.exec.state.ttl``, mini-batch, ...) is refused, naming it; a UTC local time zone is
    what flott does anyway and is accepted."""
    if not key.startswith("table."):
        return
    if key == "table.local-time-zone" and value in _UTC:
        return
    raise NotYetSupportedError(
        f"the table option {key}={value!r} is not yet supported by flott's Table API and SQL "
        "(flott plans without table.* options; time zones other than UTC are not supported)"
    )


class TableConfig:
    def __init__(self, configuration: dict[str, str] | None = None) -> None:
        self._conf: dict[str, str] = dict(configuration or {})

    def set(self, key: str, value: str) -> TableConfig:
        _check_table_option(key, str(value))
        self._conf[key] = str(value)
        return self

    def get(self, key: str, default_value: Any = None) -> Any:
        return self._conf.get(key, default_value)

    def get_configuration(self) -> dict[str, str]:
        return self._conf

    def add_configuration(self, configuration: Any) -> None:
        for key, value in _configuration_dict(configuration).items():
            self.set(key, value)

    def get_local_timezone(self) -> str:
        return self._conf.get("table.local-time-zone", "default")

    def set_local_timezone(self, timezone_id: str) -> None:
        self.set("table.local-time-zone", timezone_id)
