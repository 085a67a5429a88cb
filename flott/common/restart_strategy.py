"""Restart strategy configurations (``RestartStrategies.fixed_delay_restart(...)`` etc.) as data.

The JobMaster applies them; here they are only values that travel in the job's
configuration. :meth:`RestartStrategyConfiguration.to_config_dict` gives the
equivalent Flink configuration keys (``restart-strategy.type`` ...), which is
what the runtime reads, so a strategy set in code and one set in the cluster
configuration behave the same.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import timedelta
from typing import Any

__all__ = ["RestartStrategies", "RestartStrategyConfiguration"]


def _ms(delta: timedelta) -> int:
    return int(delta.total_seconds() * 1000)


def _java_duration(delta: timedelta) -> str:
    """Java ``Duration.toString`` of a timedelta (``PT10S``), as Flink's descriptions show."""
    from flott.common.time import Duration

    return str(Duration.of_millis(_ms(delta)))


def _as_timedelta(value: int | timedelta | None, default_ms: int = 0) -> timedelta:
    if value is None:
        return timedelta(milliseconds=default_ms)
    if isinstance(value, timedelta):
        return value
    return timedelta(milliseconds=value)


class RestartStrategyConfiguration(ABC):
    """Base of the restart strategy configurations."""

    @abstractmethod
    def get_description(self) -> str:
        """A human-readable description, as Flink's ``getDescription``."""

    @abstractmethod
    def to_config_dict(self) -> dict[str, str]:
        """Flink configuration keys equivalent to this strategy."""

    def _key(self) -> tuple[Any, ...]:
        return (type(self).__name__,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RestartStrategyConfiguration) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.get_description()!r})"


class RestartStrategies:
    """Factories of restart strategy configurations."""

    class NoRestartStrategyConfiguration(RestartStrategyConfiguration):
        """Never restart: the first failure fails the job."""

        def get_description(self) -> str:
            return "Restart deactivated."

        def to_config_dict(self) -> dict[str, str]:
            return {"restart-strategy.type": "none"}

    class FixedDelayRestartStrategyConfiguration(RestartStrategyConfiguration):
        """Restart up to ``restart_attempts`` times, waiting a fixed delay before each attempt."""

        def __init__(
            self,
            restart_attempts: int | None = None,
            delay_between_attempts_interval: timedelta | int | None = None,
        ) -> None:
            self._restart_attempts = 1 if restart_attempts is None else int(restart_attempts)
            self._delay = _as_timedelta(delay_between_attempts_interval, 1000)

        def get_restart_attempts(self) -> int:
            return self._restart_attempts

        def get_delay_between_attempts_interval(self) -> timedelta:
            return self._delay

        def get_description(self) -> str:
            return (
                f"Restart with fixed delay ({_java_duration(self._delay)}). "
                f"#{self._restart_attempts} restart attempts."
            )

        def to_config_dict(self) -> dict[str, str]:
            return {
                "restart-strategy.type": "fixed-delay",
                "restart-strategy.fixed-delay.attempts": str(self._restart_attempts),
                "restart-strategy.fixed-delay.delay": f"{_ms(self._delay)} ms",
            }

        def _key(self) -> tuple[Any, ...]:
            return ("fixed-delay", self._restart_attempts, self._delay)

    class FailureRateRestartStrategyConfiguration(RestartStrategyConfiguration):
        """Restart unless more than ``max_failure_rate`` failures happen within ``failure_interval``."""

        def __init__(
            self,
            max_failure_rate: int | None = None,
            failure_interval: timedelta | int | None = None,
            delay_between_attempts_interval: timedelta | int | None = None,
        ) -> None:
            self._max_failure_rate = 1 if max_failure_rate is None else int(max_failure_rate)
            self._failure_interval = _as_timedelta(failure_interval, 60_000)
            self._delay = _as_timedelta(delay_between_attempts_interval, 1000)

        def get_max_failure_rate(self) -> int:
            return self._max_failure_rate

        def get_failure_interval(self) -> timedelta:
            return self._failure_interval

        def get_delay_between_attempts_interval(self) -> timedelta:
            return self._delay

        def get_description(self) -> str:
            return (
                f"Failure rate restart with maximum of {self._max_failure_rate} failures within "
                f"interval {_java_duration(self._failure_interval)} and fixed delay "
                f"{_java_duration(self._delay)}."
            )

        def to_config_dict(self) -> dict[str, str]:
            return {
                "restart-strategy.type": "failure-rate",
                "restart-strategy.failure-rate.max-failures-per-interval": str(self._max_failure_rate),
                "restart-strategy.failure-rate.failure-rate-interval": f"{_ms(self._failure_interval)} ms",
                "restart-strategy.failure-rate.delay": f"{_ms(self._delay)} ms",
            }

        def _key(self) -> tuple[Any, ...]:
            return ("failure-rate", self._max_failure_rate, self._failure_interval, self._delay)

    class FallbackRestartStrategyConfiguration(RestartStrategyConfiguration):
        """Use the cluster's configured restart strategy."""

        def get_description(self) -> str:
            return "Cluster level default restart strategy"

        def to_config_dict(self) -> dict[str, str]:
            return {}

    @staticmethod
    def no_restart() -> RestartStrategies.NoRestartStrategyConfiguration:
        return RestartStrategies.NoRestartStrategyConfiguration()

    @staticmethod
    def fall_back_restart() -> RestartStrategies.FallbackRestartStrategyConfiguration:
        return RestartStrategies.FallbackRestartStrategyConfiguration()

    @staticmethod
    def fixed_delay_restart(
        restart_attempts: int, delay_between_attempts: int
    ) -> RestartStrategies.FixedDelayRestartStrategyConfiguration:
        """``delay_between_attempts`` in milliseconds."""
        return RestartStrategies.FixedDelayRestartStrategyConfiguration(
            restart_attempts, timedelta(milliseconds=delay_between_attempts)
        )

    @staticmethod
    def failure_rate_restart(
        failure_rate: int, failure_interval: int, delay_interval: int
    ) -> RestartStrategies.FailureRateRestartStrategyConfiguration:
        """``failure_interval`` and ``delay_interval`` in milliseconds."""
        return RestartStrategies.FailureRateRestartStrategyConfiguration(
            failure_rate,
            timedelta(milliseconds=failure_interval),
            timedelta(milliseconds=delay_interval),
        )
