"""``TableConfig``: the TableEnvironment's configuration; keys reach the job's StreamExecutionEnvironment."""

from __future__ import annotations

import datetime
from typing import Any

from flott.configuration import parse_duration_ms
from flott.datastream.stream_execution_environment import _configuration_dict
from flott.errors import ConfigurationError, NotYetSupportedError

__all__ = ["TableConfig"]

_UTC = frozenset({"UTC", "GMT", "Z", "Etc/UTC", "+00:00"})
"""The local time zones flott's Table runtime honours: it computes and prints times in UTC."""


STATE_TTL = "table.exec.state.ttl"
NOT_NULL_ENFORCER = "table.exec.sink.not-null-enforcer"


def not_null_enforcer(value: str) -> str:
    """``table.exec.sink.not-null-enforcer``: ERROR (fail the job) or DROP (drop the row) when a
    NULL reaches a sink's NOT NULL column; Flink's enum parsing ignores case."""
    if value.upper() not in ("ERROR", "DROP"):
        raise ConfigurationError(f"Could not parse value '{value}' for key '{NOT_NULL_ENFORCER}'.")
    return value.upper()


def state_ttl_ms(value: str) -> int:
    """``table.exec.state.ttl`` in milliseconds (Flink's duration syntax; 0 keeps state forever)."""
    ms = parse_duration_ms(STATE_TTL, value)
    if ms < 0:
        raise ConfigurationError(f"{STATE_TTL} must not be negative, got {value!r}")
    return ms


def _check_table_option(key: str, value: str) -> None:
    """Never accept what is ignored: of the ``table.*`` options flott's planner reads
    ``table.exec.state.ttl`` (idle state retention for group aggregations, regular joins and
    deduplication; a plan whose other stateful operators would need it is refused) and
    ``table.exec.sink.not-null-enforcer``; any other
    (mini-batch, ...) is refused, naming it; a UTC local time zone is what flott does anyway and is
    accepted."""
    if not key.startswith("table."):
        return
    if key == "table.local-time-zone" and value in _UTC:
        return
    if key == STATE_TTL:
        state_ttl_ms(value)
        return
    if key == NOT_NULL_ENFORCER:
        not_null_enforcer(value)
        return
    raise NotYetSupportedError(
        f"the table option {key}={value!r} is not yet supported by flott's Table API and SQL "
        "(flott plans with table.exec.state.ttl and table.exec.sink.not-null-enforcer only; "
        "time zones other than UTC are not supported)"
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

    def set_idle_state_retention(self, duration: datetime.timedelta) -> None:
        """PyFlink's setter of ``table.exec.state.ttl``: how long idle state is kept (0: forever)."""
        if not isinstance(duration, datetime.timedelta):
            raise TypeError(f"set_idle_state_retention takes a datetime.timedelta, got {duration!r}")
        self.set(STATE_TTL, f"{int(duration / datetime.timedelta(milliseconds=1))} ms")

    def get_idle_state_retention(self) -> datetime.timedelta:
        return datetime.timedelta(milliseconds=self.state_ttl_ms())

    def state_ttl_ms(self) -> int:
        return state_ttl_ms(self._conf.get(STATE_TTL, "0"))

    def not_null_enforcer(self) -> str:
        return not_null_enforcer(self._conf.get(NOT_NULL_ENFORCER, "ERROR"))

    def get_local_timezone(self) -> str:
        """The session time zone as Java's ZoneId names it. Flink resolves "default" to the
        machine's zone; flott computes in UTC only (other zones are refused), so that is UTC."""
        configured = self._conf.get("table.local-time-zone", "default")
        return "Etc/UTC" if configured == "default" else configured

    def set_local_timezone(self, timezone_id: str) -> None:
        self.set("table.local-time-zone", timezone_id)
