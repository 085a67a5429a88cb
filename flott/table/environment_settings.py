"""``EnvironmentSettings``: streaming or batch mode for a TableEnvironment (PyFlink's names)."""

from __future__ import annotations

from typing import Any

from flott.datastream.stream_execution_environment import _configuration_dict
from flott.errors import NotYetSupportedError

__all__ = ["EnvironmentSettings"]


class EnvironmentSettings:
    def __init__(self, streaming: bool = True, configuration: dict[str, str] | None = None) -> None:
        self._streaming = streaming
        self._configuration = dict(configuration or {})

    class Builder:
        def __init__(self) -> None:
            self._streaming = True
            self._configuration: dict[str, str] = {}

        def in_streaming_mode(self) -> EnvironmentSettings.Builder:
            self._streaming = True
            return self

        def in_batch_mode(self) -> EnvironmentSettings.Builder:
            self._streaming = False
            return self

        def with_configuration(self, config: Any) -> EnvironmentSettings.Builder:
            self._configuration.update(_configuration_dict(config))
            return self

        def with_built_in_catalog_name(self, built_in_catalog_name: str) -> EnvironmentSettings.Builder:
            if built_in_catalog_name != "default_catalog":
                raise NotYetSupportedError("catalogs other than default_catalog are not yet supported")
            return self

        def with_built_in_database_name(self, built_in_database_name: str) -> EnvironmentSettings.Builder:
            if built_in_database_name != "default_database":
                raise NotYetSupportedError("databases other than default_database are not yet supported")
            return self

        def build(self) -> EnvironmentSettings:
            return EnvironmentSettings(self._streaming, self._configuration)

    @staticmethod
    def new_instance() -> EnvironmentSettings.Builder:
        return EnvironmentSettings.Builder()

    @staticmethod
    def in_streaming_mode() -> EnvironmentSettings:
        return EnvironmentSettings(True)

    @staticmethod
    def in_batch_mode() -> EnvironmentSettings:
        return EnvironmentSettings(False)

    def is_streaming_mode(self) -> bool:
        return self._streaming

    def get_built_in_catalog_name(self) -> str:
        return "default_catalog"

    def get_built_in_database_name(self) -> str:
        return "default_database"

    def get_configuration(self) -> dict[str, str]:
        return dict(self._configuration)
