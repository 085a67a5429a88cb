"""When to try a registration again, and when to give up, as a pure state machine (Flink:
RetryingRegistration).

A TaskExecutor may start before its JobManager, so registering at the ResourceManager is retried.
While nothing listens at the address (the JobManager is still starting: the usual case when both
start together) a refused connection costs nothing and the first TaskExecutor should register as
soon as the JobManager is up, so it is retried after ``cluster.registration.initial-timeout``. A
ResourceManager that answers but fails the registration is retried with a delay that starts at the
same value and doubles after each such wait, up to ``cluster.registration.max-timeout``. With a
``timeout_s`` (``taskmanager.registration.timeout``), a retry that would start after
``start + timeout_s`` is not made: :class:`GiveUp`.

The shell makes the attempts and sleeps; this class only answers each failure with the wait before
the next attempt, from the time it is told (``now``, monotonic seconds).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AttemptFailed:
    """An attempt failed; ``connection_refused``: nothing answered at the address."""

    connection_refused: bool


@dataclass(frozen=True)
class RetryIn:
    delay_s: float


@dataclass(frozen=True)
class GiveUp:
    """The next attempt would start after the deadline: the registration failed for good."""


Action = RetryIn | GiveUp


class RetryingRegistration:
    def __init__(
        self, initial_delay_s: float, max_delay_s: float, timeout_s: float | None, start: float
    ) -> None:
        self._initial = initial_delay_s
        self._max = max_delay_s
        self._deadline = None if timeout_s is None else start + timeout_s
        self._delay = initial_delay_s
        """The backoff for a ResourceManager that answered but failed the registration."""

    def handle(self, event: AttemptFailed, now: float) -> Action:
        wait = self._initial if event.connection_refused else self._delay
        if self._deadline is not None and now + wait > self._deadline:
            return GiveUp()
        if wait == self._delay:
            self._delay = min(2 * self._delay, self._max)
        return RetryIn(wait)
