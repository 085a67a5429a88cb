"""Restart strategies: decisions over simulated time, configuration parsing, defaults, recoverability."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from flott.common.restart_strategy import RestartStrategies, RestartStrategyConfiguration
from flott.errors import ConfigurationError, IllegalStateTransitionError
from flott.runtime.executiongraph.failover.restart_backoff_time_strategy import (
    ExponentialDelayRestartBackoffTimeStrategy,
    FailureRateRestartBackoffTimeStrategy,
    FixedDelayRestartBackoffTimeStrategy,
    NoRestartBackoffTimeStrategy,
    RestartBackoffTimeStrategy,
    create_restart_strategy,
    is_recoverable,
)

MIN = 60_000
HOUR = 3_600_000


def decide(strategy: RestartBackoffTimeStrategy, now_ms: int) -> tuple[bool, int]:
    """One failure as the failure handler sees it: notify, then ask."""
    strategy.notify_failure(now_ms)
    return strategy.can_restart(), strategy.backoff_time_ms()


def exponential(
    initial: int = 1000,
    maximum: int = 60_000,
    multiplier: float = 2.0,
    threshold: int = HOUR,
    jitter: float = 0.0,
    attempts: int = 2**31 - 1,
    rng: random.Random | None = None,
) -> ExponentialDelayRestartBackoffTimeStrategy:
    return ExponentialDelayRestartBackoffTimeStrategy(
        initial, maximum, multiplier, threshold, jitter, attempts, rng=rng
    )


def run_until_restart(
    strategy: RestartBackoffTimeStrategy, start_ms: int, failures: int, uptime_ms: int = 10
) -> tuple[list[int], int]:
    """Fail, wait out the backoff, run ``uptime_ms``, fail again ... Returns the backoffs and the end time."""
    now = start_ms
    backoffs = []
    for _ in range(failures):
        restart, backoff = decide(strategy, now)
        assert restart
        backoffs.append(backoff)
        now += backoff + uptime_ms
    return backoffs, now


# --- no restart --------------------------------------------------------------------------------


def test_no_restart_never_restarts() -> None:
    strategy = NoRestartBackoffTimeStrategy()
    assert isinstance(strategy, RestartBackoffTimeStrategy)
    assert decide(strategy, 0) == (False, 0)
    assert decide(strategy, 10 * HOUR) == (False, 0)
    assert strategy.description() == "NoRestartBackoffTimeStrategy"


# --- fixed delay -------------------------------------------------------------------------------


def test_fixed_delay_allows_exactly_max_attempts() -> None:
    strategy = FixedDelayRestartBackoffTimeStrategy(3, 1000)
    assert isinstance(strategy, RestartBackoffTimeStrategy)
    assert [decide(strategy, t) for t in (0, 5_000, 10 * HOUR)] == [(True, 1000)] * 3
    assert strategy.can_restart() is True
    strategy.notify_failure(11 * HOUR)
    assert strategy.can_restart() is False  # the 4th failure fails the job, however late it comes
    assert strategy.description() == (
        "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=3, backoffTimeMS=1000)"
    )


def test_fixed_delay_with_zero_attempts_fails_at_once() -> None:
    strategy = FixedDelayRestartBackoffTimeStrategy(0, 0)
    assert strategy.can_restart() is True  # nothing failed yet
    assert decide(strategy, 0) == (False, 0)


# --- failure rate ------------------------------------------------------------------------------


def test_failure_rate_allows_max_failures_within_the_interval() -> None:
    strategy = FailureRateRestartBackoffTimeStrategy(2, MIN, 500)
    assert isinstance(strategy, RestartBackoffTimeStrategy)
    assert decide(strategy, 0) == (True, 500)
    assert decide(strategy, 10_000) == (True, 500)
    assert decide(strategy, 20_000) == (False, 500)  # 3 failures within one minute


def test_failure_rate_allows_again_once_the_interval_has_passed() -> None:
    strategy = FailureRateRestartBackoffTimeStrategy(2, MIN, 500)
    assert decide(strategy, 0)[0]
    assert decide(strategy, 10_000)[0]
    assert decide(strategy, MIN + 1)[0]  # the first failure has left the window: 2 within it
    assert not decide(strategy, MIN + 5_000)[0]  # 10_000, 60_001, 65_000 all within a minute
    assert decide(strategy, 2 * MIN + 2)[0]  # oldest kept is 60_001: more than a minute ago


def test_failure_rate_window_boundary_is_exclusive() -> None:
    strategy = FailureRateRestartBackoffTimeStrategy(1, MIN, 0)
    assert decide(strategy, 0)[0]
    assert not decide(strategy, MIN)[0]  # exactly one interval apart still counts as within it
    fresh = FailureRateRestartBackoffTimeStrategy(1, MIN, 0)
    assert decide(fresh, 0)[0]
    assert decide(fresh, MIN + 1)[0]


def test_failure_rate_description() -> None:
    assert FailureRateRestartBackoffTimeStrategy(1, MIN, 1000).description() == (
        "FailureRateRestartBackoffTimeStrategy(failuresIntervalMS=60000, backoffTimeMS=1000, "
        "maxFailuresPerInterval=1)"
    )


# --- exponential delay -------------------------------------------------------------------------


def test_exponential_backoff_grows_by_the_multiplier_up_to_the_max() -> None:
    strategy = exponential(initial=1000, maximum=10_000, multiplier=2.0)
    assert isinstance(strategy, RestartBackoffTimeStrategy)
    backoffs, _ = run_until_restart(strategy, 0, 7)
    assert backoffs == [1000, 2000, 4000, 8000, 10_000, 10_000, 10_000]


def test_exponential_backoff_truncates_like_java() -> None:
    strategy = exponential(initial=1000, maximum=MIN, multiplier=1.5)
    backoffs, _ = run_until_restart(strategy, 0, 5)
    assert backoffs == [1000, 1500, 2250, 3375, 5062]


def test_exponential_backoff_resets_after_the_threshold_without_failures() -> None:
    strategy = exponential(initial=1000, maximum=MIN, multiplier=2.0, threshold=10 * MIN)
    backoffs, now = run_until_restart(strategy, 0, 4)
    assert backoffs == [1000, 2000, 4000, 8000]
    restart_at = now - 10  # the last restart happened 10 ms before ``now``
    # Running just under the threshold since the last restart: the backoff keeps growing.
    assert decide(strategy, restart_at + 10 * MIN - 1) == (True, 16_000)
    restart_at += 10 * MIN - 1 + 16_000
    # Running the whole threshold since that restart: back to the initial backoff and attempt 1.
    assert decide(strategy, restart_at + 10 * MIN) == (True, 1000)
    assert strategy.current_attempt == 1


def test_exponential_failures_before_the_pending_restart_are_merged() -> None:
    strategy = exponential(initial=1000, maximum=MIN, multiplier=2.0, attempts=1)
    assert decide(strategy, 0) == (True, 1000)
    # Other tasks failing while the restart is pending belong to the same attempt.
    assert decide(strategy, 400) == (True, 600)
    assert decide(strategy, 1000) == (True, 0)
    assert strategy.current_attempt == 1
    # After the restart, a failure is the second attempt: more than attempts-before-reset-backoff.
    assert decide(strategy, 1001)[0] is False


def test_exponential_attempts_before_reset_backoff_limits_and_resets() -> None:
    strategy = exponential(initial=1000, maximum=MIN, multiplier=2.0, threshold=MIN, attempts=3)
    _, now = run_until_restart(strategy, 0, 3)
    strategy.notify_failure(now)
    assert strategy.can_restart() is False  # the 4th attempt in a row
    fresh = exponential(initial=1000, maximum=MIN, multiplier=2.0, threshold=MIN, attempts=3)
    _, now = run_until_restart(fresh, 0, 3)
    # A minute of uptime after the last restart resets the count as well as the backoff.
    assert decide(fresh, now - 10 + MIN) == (True, 1000)
    assert decide(fresh, now - 10 + MIN + 1001) == (True, 2000)


def test_exponential_jitter_stays_within_bounds() -> None:
    strategy = exponential(initial=1000, maximum=100_000, multiplier=2.0, jitter=0.1, rng=random.Random(7))
    backoffs, _ = run_until_restart(strategy, 0, 6)
    for attempt, backoff in enumerate(backoffs):
        nominal = 1000 * 2**attempt
        assert max(1000, nominal - nominal // 10) <= backoff <= nominal + nominal // 10
    assert len(set(backoffs)) == len(backoffs)


def test_exponential_jitter_never_leaves_initial_and_max() -> None:
    strategy = exponential(initial=1000, maximum=4000, multiplier=2.0, jitter=1.0, rng=random.Random(3))
    backoffs, _ = run_until_restart(strategy, 0, 200)
    assert all(1000 <= b <= 4000 for b in backoffs)
    assert 1000 in backoffs and 4000 in backoffs


def test_exponential_jitter_is_deterministic_with_a_seeded_source() -> None:
    runs = [run_until_restart(exponential(jitter=0.5, rng=random.Random(42)), 0, 8)[0] for _ in range(2)]
    assert runs[0] == runs[1]


def test_exponential_survives_very_many_attempts() -> None:
    strategy = exponential(initial=1, maximum=1000, multiplier=10.0, jitter=0.1, rng=random.Random(1))
    backoffs, _ = run_until_restart(strategy, 0, 2000, uptime_ms=1)
    assert backoffs[-1] == 1000


def test_exponential_backoff_before_any_failure_is_an_error() -> None:
    with pytest.raises(IllegalStateTransitionError):
        exponential().backoff_time_ms()


def test_exponential_description() -> None:
    assert exponential(1000, MIN, 1.5, HOUR, 0.1).description() == (
        "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS=1000, maxBackoffMS=60000, "
        "backoffMultiplier=1.5, resetBackoffThresholdMS=3600000, jitterFactor=0.1, "
        "attemptsBeforeResetBackoff=2147483647)"
    )


# --- configuration -----------------------------------------------------------------------------


def test_default_is_none_without_checkpointing() -> None:
    assert isinstance(create_restart_strategy({}, checkpointing_enabled=False), NoRestartBackoffTimeStrategy)


def test_default_is_exponential_delay_with_flink_defaults_when_checkpointing() -> None:
    strategy = create_restart_strategy({}, checkpointing_enabled=True)
    assert isinstance(strategy, ExponentialDelayRestartBackoffTimeStrategy)
    assert strategy.description() == (
        "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS=1000, maxBackoffMS=60000, "
        "backoffMultiplier=1.5, resetBackoffThresholdMS=3600000, jitterFactor=0.1, "
        "attemptsBeforeResetBackoff=2147483647)"
    )


def test_default_ignores_exponential_keys_when_type_is_unset() -> None:
    # As Flink: only an explicit restart-strategy.type makes its keys count.
    config = {"restart-strategy.exponential-delay.initial-backoff": "5 s"}
    strategy = create_restart_strategy(config, checkpointing_enabled=True)
    assert isinstance(strategy, ExponentialDelayRestartBackoffTimeStrategy)
    assert strategy.initial_backoff_ms == 1000


def test_explicit_type_wins_over_the_checkpointing_default() -> None:
    config = {"restart-strategy.type": "none"}
    assert isinstance(
        create_restart_strategy(config, checkpointing_enabled=True), NoRestartBackoffTimeStrategy
    )


@pytest.mark.parametrize("name", ["none", "off", "disable", "NONE", " Off "])
def test_no_restart_names(name: str) -> None:
    strategy = create_restart_strategy({"restart-strategy.type": name}, checkpointing_enabled=True)
    assert isinstance(strategy, NoRestartBackoffTimeStrategy)


@pytest.mark.parametrize("name", ["fixed-delay", "fixeddelay", "Fixed-Delay"])
def test_fixed_delay_names_and_defaults(name: str) -> None:
    strategy = create_restart_strategy({"restart-strategy.type": name}, checkpointing_enabled=False)
    assert strategy.description() == (
        "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=1, backoffTimeMS=1000)"
    )


@pytest.mark.parametrize("name", ["failure-rate", "failurerate"])
def test_failure_rate_names_and_defaults(name: str) -> None:
    strategy = create_restart_strategy({"restart-strategy.type": name}, checkpointing_enabled=False)
    assert strategy.description() == (
        "FailureRateRestartBackoffTimeStrategy(failuresIntervalMS=60000, backoffTimeMS=1000, "
        "maxFailuresPerInterval=1)"
    )


@pytest.mark.parametrize("name", ["exponential-delay", "exponentialdelay"])
def test_exponential_delay_names_and_defaults(name: str) -> None:
    strategy = create_restart_strategy({"restart-strategy.type": name}, checkpointing_enabled=False)
    assert isinstance(strategy, ExponentialDelayRestartBackoffTimeStrategy)
    assert (strategy.initial_backoff_ms, strategy.max_backoff_ms) == (1000, MIN)
    assert (strategy.backoff_multiplier, strategy.reset_backoff_threshold_ms) == (1.5, HOUR)
    assert (strategy.jitter_factor, strategy.attempts_before_reset_backoff) == (0.1, 2**31 - 1)


def test_deprecated_restart_strategy_key_is_read() -> None:
    config = {"restart-strategy": "fixed-delay", "restart-strategy.fixed-delay.attempts": "4"}
    strategy = create_restart_strategy(config, checkpointing_enabled=False)
    assert isinstance(strategy, FixedDelayRestartBackoffTimeStrategy)
    assert strategy.max_attempts == 4
    both = {"restart-strategy": "fixed-delay", "restart-strategy.type": "none"}
    assert isinstance(
        create_restart_strategy(both, checkpointing_enabled=False), NoRestartBackoffTimeStrategy
    )


def test_fixed_delay_keys_and_duration_formats() -> None:
    for text, ms in [
        ("2 s", 2000),
        ("500 ms", 500),
        ("1min", MIN),
        ("250", 250),
        ("1 h", HOUR),
        ("1d", 24 * HOUR),
    ]:
        config = {
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": "5",
            "restart-strategy.fixed-delay.delay": text,
        }
        strategy = create_restart_strategy(config, checkpointing_enabled=False)
        assert decide(strategy, 0) == (True, ms)
        assert isinstance(strategy, FixedDelayRestartBackoffTimeStrategy)
        assert strategy.max_attempts == 5


def test_failure_rate_keys() -> None:
    config = {
        "restart-strategy.type": "failure-rate",
        "restart-strategy.failure-rate.max-failures-per-interval": "2",
        "restart-strategy.failure-rate.failure-rate-interval": "30 s",
        "restart-strategy.failure-rate.delay": "100 ms",
    }
    strategy = create_restart_strategy(config, checkpointing_enabled=False)
    assert decide(strategy, 0) == (True, 100)
    assert decide(strategy, 1_000) == (True, 100)
    assert decide(strategy, 30_000) == (False, 100)


def test_exponential_delay_keys() -> None:
    config = {
        "restart-strategy.type": "exponential-delay",
        "restart-strategy.exponential-delay.initial-backoff": "10 ms",
        "restart-strategy.exponential-delay.max-backoff": "1 s",
        "restart-strategy.exponential-delay.backoff-multiplier": "3",
        "restart-strategy.exponential-delay.reset-backoff-threshold": "1 min",
        "restart-strategy.exponential-delay.jitter-factor": "0",
        "restart-strategy.exponential-delay.attempts-before-reset-backoff": "4",
    }
    strategy = create_restart_strategy(config, checkpointing_enabled=False, rng=random.Random(0))
    backoffs, now = run_until_restart(strategy, 0, 4)
    assert backoffs == [10, 30, 90, 270]
    assert decide(strategy, now)[0] is False


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"restart-strategy.type": "sometimes"}, "restart-strategy.type"),
        ({"restart-strategy": "sometimes"}, "restart-strategy"),
        ({"restart-strategy.type": ""}, "restart-strategy.type"),
        (
            {"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "three"},
            "restart-strategy.fixed-delay.attempts",
        ),
        (
            {"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "-1"},
            "restart-strategy.fixed-delay.attempts",
        ),
        (
            {"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "9999999999"},
            "restart-strategy.fixed-delay.attempts",
        ),
        (
            {"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.delay": "soon"},
            "restart-strategy.fixed-delay.delay",
        ),
        (
            {"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.delay": "-1"},
            "restart-strategy.fixed-delay.delay",
        ),
        (
            {
                "restart-strategy.type": "failure-rate",
                "restart-strategy.failure-rate.max-failures-per-interval": "0",
            },
            "restart-strategy.failure-rate.max-failures-per-interval",
        ),
        (
            {
                "restart-strategy.type": "failure-rate",
                "restart-strategy.failure-rate.failure-rate-interval": "0 s",
            },
            "restart-strategy.failure-rate.failure-rate-interval",
        ),
        (
            {"restart-strategy.type": "failure-rate", "restart-strategy.failure-rate.delay": "1 week"},
            "restart-strategy.failure-rate.delay",
        ),
        (
            {
                "restart-strategy.type": "exponential-delay",
                "restart-strategy.exponential-delay.initial-backoff": "0",
            },
            "restart-strategy.exponential-delay.initial-backoff",
        ),
        (
            {
                "restart-strategy.type": "exponential-delay",
                "restart-strategy.exponential-delay.initial-backoff": "2 min",
            },
            "restart-strategy.exponential-delay.max-backoff",  # initial above the default max of 1 min
        ),
        (
            {
                "restart-strategy.type": "exponential-delay",
                "restart-strategy.exponential-delay.backoff-multiplier": "1",
            },
            "restart-strategy.exponential-delay.backoff-multiplier",
        ),
        (
            {
                "restart-strategy.type": "exponential-delay",
                "restart-strategy.exponential-delay.backoff-multiplier": "fast",
            },
            "restart-strategy.exponential-delay.backoff-multiplier",
        ),
        (
            {
                "restart-strategy.type": "exponential-delay",
                "restart-strategy.exponential-delay.backoff-multiplier": "inf",
            },
            "restart-strategy.exponential-delay.backoff-multiplier",
        ),
        (
            {
                "restart-strategy.type": "exponential-delay",
                "restart-strategy.exponential-delay.reset-backoff-threshold": "0 ms",
            },
            "restart-strategy.exponential-delay.reset-backoff-threshold",
        ),
        (
            {
                "restart-strategy.type": "exponential-delay",
                "restart-strategy.exponential-delay.jitter-factor": "1.5",
            },
            "restart-strategy.exponential-delay.jitter-factor",
        ),
        (
            {
                "restart-strategy.type": "exponential-delay",
                "restart-strategy.exponential-delay.jitter-factor": "-0.1",
            },
            "restart-strategy.exponential-delay.jitter-factor",
        ),
        (
            {
                "restart-strategy.type": "exponential-delay",
                "restart-strategy.exponential-delay.attempts-before-reset-backoff": "0",
            },
            "restart-strategy.exponential-delay.attempts-before-reset-backoff",
        ),
    ],
)
def test_bad_values_raise_configuration_error_naming_the_key(config: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        create_restart_strategy(config, checkpointing_enabled=False)
    assert f"'{key}'" in str(info.value)


# --- the user API's RestartStrategies round-trip through the configuration ---------------------


def _from_user_api(conf: RestartStrategyConfiguration, checkpointing: bool) -> RestartBackoffTimeStrategy:
    return create_restart_strategy(conf.to_config_dict(), checkpointing_enabled=checkpointing)


def test_user_api_no_restart_round_trips() -> None:
    strategy = _from_user_api(RestartStrategies.no_restart(), checkpointing=True)
    assert isinstance(strategy, NoRestartBackoffTimeStrategy)


@pytest.mark.parametrize(
    ("conf", "attempts", "delay_ms"),
    [
        (RestartStrategies.fixed_delay_restart(3, 2500), 3, 2500),
        (RestartStrategies.fixed_delay_restart(0, 0), 0, 0),
        (RestartStrategies.FixedDelayRestartStrategyConfiguration(), 1, 1000),
        (RestartStrategies.FixedDelayRestartStrategyConfiguration(7, timedelta(minutes=2)), 7, 2 * MIN),
    ],
)
def test_user_api_fixed_delay_round_trips(
    conf: RestartStrategies.FixedDelayRestartStrategyConfiguration, attempts: int, delay_ms: int
) -> None:
    strategy = _from_user_api(conf, checkpointing=False)
    assert isinstance(strategy, FixedDelayRestartBackoffTimeStrategy)
    assert strategy.max_attempts == attempts
    assert strategy.backoff_time_ms() == delay_ms


@pytest.mark.parametrize(
    ("conf", "max_failures", "interval_ms", "delay_ms"),
    [
        (RestartStrategies.failure_rate_restart(2, 30_000, 500), 2, 30_000, 500),
        (RestartStrategies.FailureRateRestartStrategyConfiguration(), 1, MIN, 1000),
        (
            RestartStrategies.FailureRateRestartStrategyConfiguration(
                4, timedelta(hours=1), timedelta(seconds=10)
            ),
            4,
            HOUR,
            10_000,
        ),
    ],
)
def test_user_api_failure_rate_round_trips(
    conf: RestartStrategies.FailureRateRestartStrategyConfiguration,
    max_failures: int,
    interval_ms: int,
    delay_ms: int,
) -> None:
    strategy = _from_user_api(conf, checkpointing=False)
    assert isinstance(strategy, FailureRateRestartBackoffTimeStrategy)
    assert strategy.max_failures_per_interval == max_failures
    assert strategy.failure_interval_ms == interval_ms
    assert strategy.backoff_time_ms() == delay_ms


def test_user_api_fall_back_uses_the_default() -> None:
    fallback = RestartStrategies.fall_back_restart()
    assert isinstance(_from_user_api(fallback, checkpointing=False), NoRestartBackoffTimeStrategy)
    assert isinstance(
        _from_user_api(fallback, checkpointing=True), ExponentialDelayRestartBackoffTimeStrategy
    )


def test_every_user_api_strategy_kind_is_parsed() -> None:
    kinds = [
        cls
        for cls in vars(RestartStrategies).values()
        if isinstance(cls, type) and issubclass(cls, RestartStrategyConfiguration)
    ]
    assert len(kinds) == 4  # a new kind needs a round-trip test above
    for kind in kinds:
        conf = kind()
        create_restart_strategy(conf.to_config_dict(), checkpointing_enabled=False)


# --- recoverability ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "ConfigurationError",
        "NotYetSupportedError",
        "InvalidJobGraphError",
        "RestoreError",
        "SnapshotFormatError",
        "RestRequestError",
        "PayloadTooLargeError",
        "flott.errors.ConfigurationError",
    ],
)
def test_not_recoverable(name: str) -> None:
    assert is_recoverable(name) is False


@pytest.mark.parametrize(
    "name",
    [
        "UserCodeError",
        "TaskExecutorLostError",
        "DataExchangeError",
        "RpcError",
        "RpcTimeoutError",
        "NoResourceAvailableError",
        "CheckpointFailureLimitExceededError",
        "JobArtifactError",
        "SomethingNobodyDefined",
    ],
)
def test_recoverable(name: str) -> None:
    assert is_recoverable(name) is True


def test_subclasses_of_non_recoverable_errors_are_not_recoverable() -> None:
    class UnknownKeyForTestError(ConfigurationError):
        pass

    assert is_recoverable(UnknownKeyForTestError.__name__) is False
