"""Flink's restart strategies (``RestartBackoffTimeStrategy``): may a failed job restart, and when.

Pure and synchronous: no clock is read and nothing sleeps. The caller passes the
time of each failure (``now_ms``, epoch milliseconds) and asks, in Flink's
``ExecutionFailureHandler`` order::

    strategy.notify_failure(now_ms)
    if strategy.can_restart():
        restart after strategy.backoff_time_ms()
    else:
        fail the job

``can_restart`` and ``backoff_time_ms`` answer as of the last ``notify_failure``.
Which errors are worth restarting at all is :func:`is_recoverable`'s call.

:func:`create_restart_strategy` reads Flink's configuration keys
(``restart-strategy.type`` and ``restart-strategy.<type>.*``), with Flink 2.x's
defaults; ``RestartStrategies.*`` of the user API turn into the same keys
(:meth:`~flott.common.restart_strategy.RestartStrategyConfiguration.to_config_dict`).
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from flott.configuration import parse_duration_ms
from flott.errors import ConfigurationError, FlottError, IllegalStateTransitionError

__all__ = [
    "DEFAULT_EXPONENTIAL_DELAY_ATTEMPTS_BEFORE_RESET_BACKOFF",
    "DEFAULT_EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER",
    "DEFAULT_EXPONENTIAL_DELAY_INITIAL_BACKOFF_MS",
    "DEFAULT_EXPONENTIAL_DELAY_JITTER_FACTOR",
    "DEFAULT_EXPONENTIAL_DELAY_MAX_BACKOFF_MS",
    "DEFAULT_EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD_MS",
    "DEFAULT_FAILURE_RATE_DELAY_MS",
    "DEFAULT_FAILURE_RATE_INTERVAL_MS",
    "DEFAULT_FAILURE_RATE_MAX_FAILURES_PER_INTERVAL",
    "DEFAULT_FIXED_DELAY_ATTEMPTS",
    "DEFAULT_FIXED_DELAY_DELAY_MS",
    "NON_RECOVERABLE_ERROR_TYPES",
    "RESTART_STRATEGY",
    "ExponentialDelayRestartBackoffTimeStrategy",
    "FailureRateRestartBackoffTimeStrategy",
    "FixedDelayRestartBackoffTimeStrategy",
    "NoRestartBackoffTimeStrategy",
    "RestartBackoffTimeStrategy",
    "create_restart_strategy",
    "is_recoverable",
]

_INT_MAX = 2**31 - 1  # Java's Integer.MAX_VALUE: Flink's "infinite" number of attempts
_LONG_MAX = 2**63 - 1  # a Java (long) cast of a too large double saturates here

# --- configuration keys (Flink's RestartStrategyOptions) ---------------------------------------

RESTART_STRATEGY = "restart-strategy.type"
_RESTART_STRATEGY_DEPRECATED = "restart-strategy"

FIXED_DELAY_ATTEMPTS = "restart-strategy.fixed-delay.attempts"
FIXED_DELAY_DELAY = "restart-strategy.fixed-delay.delay"

FAILURE_RATE_MAX_FAILURES_PER_INTERVAL = "restart-strategy.failure-rate.max-failures-per-interval"
FAILURE_RATE_INTERVAL = "restart-strategy.failure-rate.failure-rate-interval"
FAILURE_RATE_DELAY = "restart-strategy.failure-rate.delay"

EXPONENTIAL_DELAY_INITIAL_BACKOFF = "restart-strategy.exponential-delay.initial-backoff"
EXPONENTIAL_DELAY_MAX_BACKOFF = "restart-strategy.exponential-delay.max-backoff"
EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER = "restart-strategy.exponential-delay.backoff-multiplier"
EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD = "restart-strategy.exponential-delay.reset-backoff-threshold"
EXPONENTIAL_DELAY_JITTER_FACTOR = "restart-strategy.exponential-delay.jitter-factor"
EXPONENTIAL_DELAY_ATTEMPTS = "restart-strategy.exponential-delay.attempts-before-reset-backoff"

# --- Flink 2.x defaults ------------------------------------------------------------------------

DEFAULT_FIXED_DELAY_ATTEMPTS = 1
DEFAULT_FIXED_DELAY_DELAY_MS = 1_000

DEFAULT_FAILURE_RATE_MAX_FAILURES_PER_INTERVAL = 1
DEFAULT_FAILURE_RATE_INTERVAL_MS = 60_000
DEFAULT_FAILURE_RATE_DELAY_MS = 1_000

DEFAULT_EXPONENTIAL_DELAY_INITIAL_BACKOFF_MS = 1_000
DEFAULT_EXPONENTIAL_DELAY_MAX_BACKOFF_MS = 60_000
DEFAULT_EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER = 1.5
DEFAULT_EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD_MS = 3_600_000
DEFAULT_EXPONENTIAL_DELAY_JITTER_FACTOR = 0.1
DEFAULT_EXPONENTIAL_DELAY_ATTEMPTS_BEFORE_RESET_BACKOFF = _INT_MAX  # "infinite"

_NO_RESTART_NAMES = frozenset({"none", "off", "disable"})
_FIXED_DELAY_NAMES = frozenset({"fixed-delay", "fixeddelay"})
_FAILURE_RATE_NAMES = frozenset({"failure-rate", "failurerate"})
_EXPONENTIAL_DELAY_NAMES = frozenset({"exponential-delay", "exponentialdelay"})


@runtime_checkable
class RestartBackoffTimeStrategy(Protocol):
    """Decides whether a failed job may restart and how long to wait first."""

    def notify_failure(self, now_ms: int) -> None:
        """A failure happened at ``now_ms``."""

    def can_restart(self) -> bool:
        """After :meth:`notify_failure`: may the job restart?"""

    def backoff_time_ms(self) -> int:
        """After :meth:`notify_failure`: how long to wait before restarting."""

    def description(self) -> str:
        """The strategy and its parameters, as Flink's ``toString``."""


class NoRestartBackoffTimeStrategy:
    """Never restart: the first failure fails the job."""

    def notify_failure(self, now_ms: int) -> None:
        pass

    def can_restart(self) -> bool:
        return False

    def backoff_time_ms(self) -> int:
        return 0

    def description(self) -> str:
        return "NoRestartBackoffTimeStrategy"

    def __repr__(self) -> str:
        return self.description()


class FixedDelayRestartBackoffTimeStrategy:
    """Restart at most ``max_attempts`` times, each after the same delay."""

    def __init__(self, max_attempts: int, backoff_time_ms: int) -> None:
        if max_attempts < 0:
            raise ConfigurationError(f"'{FIXED_DELAY_ATTEMPTS}' must be at least 0, got {max_attempts}")
        if backoff_time_ms < 0:
            raise ConfigurationError(f"'{FIXED_DELAY_DELAY}' must be at least 0 ms, got {backoff_time_ms}")
        self.max_attempts = max_attempts
        self._backoff_time_ms = backoff_time_ms
        self.current_attempt = 0

    def notify_failure(self, now_ms: int) -> None:
        self.current_attempt += 1

    def can_restart(self) -> bool:
        return self.current_attempt <= self.max_attempts

    def backoff_time_ms(self) -> int:
        return self._backoff_time_ms

    def description(self) -> str:
        return (
            f"FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts={self.max_attempts}, "
            f"backoffTimeMS={self._backoff_time_ms})"
        )

    def __repr__(self) -> str:
        return self.description()


class FailureRateRestartBackoffTimeStrategy:
    """Restart unless more than ``max_failures_per_interval`` failures fell within ``failure_interval_ms``.

    With ``max_failures_per_interval = n`` the last ``n + 1`` failure times are
    kept; the job may restart unless all of them lie within the interval (the
    newest minus the oldest is not more than the interval).
    """

    def __init__(
        self, max_failures_per_interval: int, failure_interval_ms: int, backoff_time_ms: int
    ) -> None:
        if max_failures_per_interval <= 0:
            raise ConfigurationError(
                f"'{FAILURE_RATE_MAX_FAILURES_PER_INTERVAL}' must be greater than 0, "
                f"got {max_failures_per_interval}"
            )
        if failure_interval_ms <= 0:
            raise ConfigurationError(
                f"'{FAILURE_RATE_INTERVAL}' must be greater than 0 ms, got {failure_interval_ms}"
            )
        if backoff_time_ms < 0:
            raise ConfigurationError(f"'{FAILURE_RATE_DELAY}' must be at least 0 ms, got {backoff_time_ms}")
        self.max_failures_per_interval = max_failures_per_interval
        self.failure_interval_ms = failure_interval_ms
        self._backoff_time_ms = backoff_time_ms
        self._failure_times: deque[int] = deque(maxlen=max_failures_per_interval + 1)

    def notify_failure(self, now_ms: int) -> None:
        self._failure_times.append(now_ms)  # the deque drops the oldest once full

    def can_restart(self) -> bool:
        if len(self._failure_times) <= self.max_failures_per_interval:
            return True
        return self._failure_times[-1] - self._failure_times[0] > self.failure_interval_ms

    def backoff_time_ms(self) -> int:
        return self._backoff_time_ms

    def description(self) -> str:
        return (
            f"FailureRateRestartBackoffTimeStrategy(failuresIntervalMS={self.failure_interval_ms}, "
            f"backoffTimeMS={self._backoff_time_ms}, "
            f"maxFailuresPerInterval={self.max_failures_per_interval})"
        )

    def __repr__(self) -> str:
        return self.description()


class ExponentialDelayRestartBackoffTimeStrategy:
    """Restart with a backoff that grows by ``backoff_multiplier`` per attempt, up to ``max_backoff_ms``.

    * Attempt ``k`` (0-based) waits ``initial * multiplier**k``, plus a jitter drawn
      uniformly from ``[-j, +j]`` with ``j = jitter_factor`` times that value,
      then clamped to ``[initial_backoff_ms, max_backoff_ms]``.
    * Failures up to the moment the pending restart is due (``now <= next
      restart``) are merged into that one attempt: they neither count nor push
      the restart out; the backoff is then what remains until the restart.
    * Once the job ran ``reset_backoff_threshold_ms`` past its last restart
      without a failure, the backoff and the attempt count start over.
    * At most ``attempts_before_reset_backoff`` attempts between two resets
      (default: Java's ``Integer.MAX_VALUE``, i.e. unlimited).

    ``rng`` is the jitter's random source; pass a seeded ``random.Random`` for
    reproducible backoffs.
    """

    def __init__(
        self,
        initial_backoff_ms: int,
        max_backoff_ms: int,
        backoff_multiplier: float,
        reset_backoff_threshold_ms: int,
        jitter_factor: float,
        attempts_before_reset_backoff: int = DEFAULT_EXPONENTIAL_DELAY_ATTEMPTS_BEFORE_RESET_BACKOFF,
        rng: random.Random | None = None,
    ) -> None:
        if initial_backoff_ms < 1:
            raise ConfigurationError(
                f"'{EXPONENTIAL_DELAY_INITIAL_BACKOFF}' must be at least 1 ms, got {initial_backoff_ms}"
            )
        if max_backoff_ms < 1:
            raise ConfigurationError(
                f"'{EXPONENTIAL_DELAY_MAX_BACKOFF}' must be at least 1 ms, got {max_backoff_ms}"
            )
        if initial_backoff_ms > max_backoff_ms:
            raise ConfigurationError(
                f"'{EXPONENTIAL_DELAY_INITIAL_BACKOFF}' ({initial_backoff_ms} ms) cannot be higher than "
                f"'{EXPONENTIAL_DELAY_MAX_BACKOFF}' ({max_backoff_ms} ms)"
            )
        if not backoff_multiplier > 1:
            raise ConfigurationError(
                f"'{EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER}' must be greater than 1, got {backoff_multiplier}"
            )
        if reset_backoff_threshold_ms < 1:
            raise ConfigurationError(
                f"'{EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD}' must be at least 1 ms, "
                f"got {reset_backoff_threshold_ms}"
            )
        if not 0 <= jitter_factor <= 1:
            raise ConfigurationError(
                f"'{EXPONENTIAL_DELAY_JITTER_FACTOR}' must be >= 0 and <= 1, got {jitter_factor}"
            )
        if attempts_before_reset_backoff < 1:
            raise ConfigurationError(
                f"'{EXPONENTIAL_DELAY_ATTEMPTS}' must be at least 1, got {attempts_before_reset_backoff}"
            )
        self.initial_backoff_ms = initial_backoff_ms
        self.max_backoff_ms = max_backoff_ms
        self.backoff_multiplier = float(backoff_multiplier)
        self.reset_backoff_threshold_ms = reset_backoff_threshold_ms
        self.jitter_factor = float(jitter_factor)
        self.attempts_before_reset_backoff = attempts_before_reset_backoff
        self._rng = rng if rng is not None else random.Random()
        self.current_attempt = 0
        self._next_restart_ms: int | None = None
        self._last_failure_ms: int | None = None

    def notify_failure(self, now_ms: int) -> None:
        self._last_failure_ms = now_ms
        if self._next_restart_ms is not None:
            if now_ms <= self._next_restart_ms:
                return  # merged into the restart already pending
            if now_ms - self._next_restart_ms >= self.reset_backoff_threshold_ms:
                self.current_attempt = 0
        self._next_restart_ms = now_ms + self._backoff_of_current_attempt()
        self.current_attempt += 1

    def can_restart(self) -> bool:
        return self.current_attempt <= self.attempts_before_reset_backoff

    def backoff_time_ms(self) -> int:
        if self._next_restart_ms is None or self._last_failure_ms is None:
            raise IllegalStateTransitionError("backoff_time_ms() asked before any notify_failure()")
        return max(0, self._next_restart_ms - self._last_failure_ms)

    def description(self) -> str:
        return (
            f"ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS={self.initial_backoff_ms}, "
            f"maxBackoffMS={self.max_backoff_ms}, backoffMultiplier={self.backoff_multiplier}, "
            f"resetBackoffThresholdMS={self.reset_backoff_threshold_ms}, "
            f"jitterFactor={self.jitter_factor}, "
            f"attemptsBeforeResetBackoff={self.attempts_before_reset_backoff})"
        )

    def __repr__(self) -> str:
        return self.description()

    def _backoff_of_current_attempt(self) -> int:
        try:
            raw = self.initial_backoff_ms * self.backoff_multiplier**self.current_attempt
        except OverflowError:
            raw = math.inf
        current = _LONG_MAX if raw >= _LONG_MAX else int(raw)
        jitter = 0
        if self.jitter_factor != 0:
            offset = int(current * self.jitter_factor)
            jitter = self._rng.randint(-offset, offset)
        return max(self.initial_backoff_ms, min(current + jitter, self.max_backoff_ms))


# --- configuration -----------------------------------------------------------------------------


def create_restart_strategy(
    job_config: Mapping[str, str],
    *,
    checkpointing_enabled: bool,
    rng: random.Random | None = None,
) -> RestartBackoffTimeStrategy:
    """The restart strategy ``job_config`` asks for (Flink's ``RestartBackoffTimeStrategyFactoryLoader``).

    ``restart-strategy.type`` (or its deprecated name ``restart-strategy``),
    case-insensitive: ``none``/``off``/``disable``, ``fixed-delay``/``fixeddelay``,
    ``failure-rate``/``failurerate``, ``exponential-delay``/``exponentialdelay``.
    Unset: exponential-delay with its default parameters if checkpointing is
    enabled (as in Flink, the ``exponential-delay.*`` keys are then not read),
    else no restart. ``rng`` is the exponential-delay jitter's random source.
    Bad values raise :class:`~flott.errors.ConfigurationError` naming the key.
    """
    key = RESTART_STRATEGY
    raw = job_config.get(RESTART_STRATEGY)
    if raw is None:
        key = _RESTART_STRATEGY_DEPRECATED
        raw = job_config.get(_RESTART_STRATEGY_DEPRECATED)
    if raw is None:
        if checkpointing_enabled:
            return ExponentialDelayRestartBackoffTimeStrategy(
                DEFAULT_EXPONENTIAL_DELAY_INITIAL_BACKOFF_MS,
                DEFAULT_EXPONENTIAL_DELAY_MAX_BACKOFF_MS,
                DEFAULT_EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER,
                DEFAULT_EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD_MS,
                DEFAULT_EXPONENTIAL_DELAY_JITTER_FACTOR,
                DEFAULT_EXPONENTIAL_DELAY_ATTEMPTS_BEFORE_RESET_BACKOFF,
                rng=rng,
            )
        return NoRestartBackoffTimeStrategy()

    name = str(raw).strip().lower()
    if name in _NO_RESTART_NAMES:
        return NoRestartBackoffTimeStrategy()
    if name in _FIXED_DELAY_NAMES:
        return FixedDelayRestartBackoffTimeStrategy(
            _int(job_config, FIXED_DELAY_ATTEMPTS, DEFAULT_FIXED_DELAY_ATTEMPTS),
            _duration_ms(job_config, FIXED_DELAY_DELAY, DEFAULT_FIXED_DELAY_DELAY_MS),
        )
    if name in _FAILURE_RATE_NAMES:
        return FailureRateRestartBackoffTimeStrategy(
            _int(
                job_config,
                FAILURE_RATE_MAX_FAILURES_PER_INTERVAL,
                DEFAULT_FAILURE_RATE_MAX_FAILURES_PER_INTERVAL,
            ),
            _duration_ms(job_config, FAILURE_RATE_INTERVAL, DEFAULT_FAILURE_RATE_INTERVAL_MS),
            _duration_ms(job_config, FAILURE_RATE_DELAY, DEFAULT_FAILURE_RATE_DELAY_MS),
        )
    if name in _EXPONENTIAL_DELAY_NAMES:
        return ExponentialDelayRestartBackoffTimeStrategy(
            _duration_ms(
                job_config, EXPONENTIAL_DELAY_INITIAL_BACKOFF, DEFAULT_EXPONENTIAL_DELAY_INITIAL_BACKOFF_MS
            ),
            _duration_ms(job_config, EXPONENTIAL_DELAY_MAX_BACKOFF, DEFAULT_EXPONENTIAL_DELAY_MAX_BACKOFF_MS),
            _float(
                job_config, EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER, DEFAULT_EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER
            ),
            _duration_ms(
                job_config,
                EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD,
                DEFAULT_EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD_MS,
            ),
            _float(job_config, EXPONENTIAL_DELAY_JITTER_FACTOR, DEFAULT_EXPONENTIAL_DELAY_JITTER_FACTOR),
            _int(
                job_config,
                EXPONENTIAL_DELAY_ATTEMPTS,
                DEFAULT_EXPONENTIAL_DELAY_ATTEMPTS_BEFORE_RESET_BACKOFF,
            ),
            rng=rng,
        )
    accepted = ", ".join(
        sorted(_NO_RESTART_NAMES | _FIXED_DELAY_NAMES | _FAILURE_RATE_NAMES | _EXPONENTIAL_DELAY_NAMES)
    )
    raise ConfigurationError(f"Unknown restart strategy '{raw}' for key '{key}'; accepted values: {accepted}")


def _int(config: Mapping[str, str], key: str, default: int) -> int:
    raw = config.get(key)
    if raw is None:
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise ConfigurationError(f"Could not parse value '{raw}' for key '{key}' as an integer") from None
    if not -(2**31) <= value <= _INT_MAX:
        raise ConfigurationError(f"Value '{raw}' for key '{key}' is out of the integer range")
    return value


def _float(config: Mapping[str, str], key: str, default: float) -> float:
    raw = config.get(key)
    if raw is None:
        return default
    try:
        value = float(str(raw).strip())
    except ValueError:
        raise ConfigurationError(f"Could not parse value '{raw}' for key '{key}' as a number") from None
    if not math.isfinite(value):
        raise ConfigurationError(f"Value '{raw}' for key '{key}' must be a finite number")
    return value


def _duration_ms(config: Mapping[str, str], key: str, default_ms: int) -> int:
    raw = config.get(key)
    if raw is None:
        return default_ms
    value = parse_duration_ms(key, str(raw))
    if value < 0:
        raise ConfigurationError(f"Value '{raw}' for key '{key}' must not be negative")
    return value


# --- which failures may be restarted at all -----------------------------------------------------

NON_RECOVERABLE_ERROR_TYPES: frozenset[str] = frozenset(
    {
        # the job as submitted is wrong; a restart runs into the same wall
        "ConfigurationError",  # 400: bad config key or value
        "InvalidJobGraphError",  # 400: a JobGraph that cannot be run
        "RestRequestError",  # 400: a malformed request (REST layer)
        "PayloadTooLargeError",  # 413
        "NotYetSupportedError",  # 501: a Flink capability flott has not built
        # flott.runtime.checkpoint.errors: the snapshot to restore from cannot be used
        "RestoreError",  # 400: e.g. parallelism above max parallelism
        "SnapshotFormatError",  # 400: missing/corrupt _metadata or state file, unknown version
    }
)


def is_recoverable(error_type: str) -> bool:
    """May a failure of this error class (``WireError.type``, a class name) be restarted at all?

    Not for :data:`NON_RECOVERABLE_ERROR_TYPES` and their subclasses (as far as
    the subclass is loaded in this process); every other error, known or not
    (``UserCodeError``, ``TaskExecutorLostError``, ``DataExchangeError``,
    ``RpcError`` ...), is recoverable: the restart strategy then decides.
    """
    name = error_type.rsplit(".", 1)[-1].strip()
    if name in NON_RECOVERABLE_ERROR_TYPES:
        return False
    cls = _loaded_error_class(name)
    return cls is None or not any(base.__name__ in NON_RECOVERABLE_ERROR_TYPES for base in cls.__mro__)


def _loaded_error_class(name: str) -> type[FlottError] | None:
    """The class of flott's error tree called ``name``, among those defined so far."""
    pending: list[type[FlottError]] = [FlottError]
    seen: set[type[FlottError]] = set()
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.add(cls)
        if cls.__name__ == name:
            return cls
        pending.extend(cls.__subclasses__())
    return None


# --- how Flink's web UI names a strategy (``/jobs/:id/config``) --------------------------------


def java_duration(ms: int) -> str:
    """Java's ``Duration.toString`` (ISO-8601) of ``ms`` milliseconds: ``PT1S``, ``PT0.1S``, ``PT1M30S``."""
    if ms == 0:
        return "PT0S"
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    out = "PT" + (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    if seconds or millis:
        out += f"{seconds}.{millis:03d}".rstrip("0").rstrip(".") + "S"
    return out


def web_description(strategy: object) -> str:
    """The strategy as Flink's ``RestartStrategyDescriptionUtils`` describes it in the job's config.

    flott describes the strategy the job actually runs with (Flink's own default when the job
    sets none included), where Flink writes "Cluster level default restart strategy".
    """
    if isinstance(strategy, FixedDelayRestartBackoffTimeStrategy):
        return (
            f"Restart with fixed delay ({java_duration(strategy.backoff_time_ms())}). "
            f"#{strategy.max_attempts} restart attempts."
        )
    if isinstance(strategy, FailureRateRestartBackoffTimeStrategy):
        return (
            f"Failure rate restart with maximum of {strategy.max_failures_per_interval} failures within "
            f"interval {java_duration(strategy.failure_interval_ms)} and fixed delay "
            f"{java_duration(strategy.backoff_time_ms())}."
        )
    if isinstance(strategy, ExponentialDelayRestartBackoffTimeStrategy):
        return (
            f"Restart with exponential delay: starting at {java_duration(strategy.initial_backoff_ms)}, "
            f"increasing by {strategy.backoff_multiplier:f}, with maximum "
            f"{java_duration(strategy.max_backoff_ms)}. Delay resets after "
            f"{java_duration(strategy.reset_backoff_threshold_ms)} with jitter {strategy.jitter_factor:f}"
        )
    return "Restart deactivated."
