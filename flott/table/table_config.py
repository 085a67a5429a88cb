"""``TableConfig``: the TableEnvironment's configuration; keys reach the job's StreamExecutionEnvironment."""

from __future__ import annotations

from typing import Any

__all__ = ["TableConfig"]


class TableConfig:
    def __init__(self, configuration: dict[str, str] | None = None) -> None:
        self._conf: dict[str, str] = dict(configuration or {})

    def set(self, key: str, value: str) -> TableConfig:
        self._conf[key] = str(value)
        return self

    def get(self, key: str, default_value: Any = None) -> Any:
        return self._conf.get(key, default_value)

    def get_configuration(self) -> dict[str, str]:
        return self._conf

    def add_configuration(self, configuration: Any) -> None:
        from flott.datastream.stream_execution_environment import _configuration_dict

        self._conf.update(_configuration_dict(configuration))

    def get_local_timezone(self) -> str:
        return self._conf.get("table.local-time-zone", "default")

    def set_local_timezone(self, timezone_id: str) -> None:
        self._conf["table.local-time-zone"] = timezone_id
