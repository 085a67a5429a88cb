"""Registration retries: the waits and the deadline, on an explicit clock."""

from __future__ import annotations

from flott.runtime.registration.retrying_registration import (
    AttemptFailed,
    GiveUp,
    RetryIn,
    RetryingRegistration,
)

REFUSED = AttemptFailed(connection_refused=True)
FAILED = AttemptFailed(connection_refused=False)


def test_refused_connections_retry_at_the_initial_delay_and_failures_back_off_to_the_maximum() -> None:
    r = RetryingRegistration(initial_delay_s=0.1, max_delay_s=1.0, timeout_s=None, start=0)
    assert r.handle(FAILED, 0) == RetryIn(0.1)
    assert r.handle(FAILED, 1) == RetryIn(0.2)
    assert r.handle(REFUSED, 2) == RetryIn(0.1)  # nothing listens: try again soon, backoff kept
    waits = [r.handle(FAILED, t) for t in range(3, 7)]
    assert waits == [RetryIn(0.4), RetryIn(0.8), RetryIn(1.0), RetryIn(1.0)]


def test_no_retry_starts_after_the_registration_timeout() -> None:
    r = RetryingRegistration(initial_delay_s=1, max_delay_s=30, timeout_s=10, start=100)
    assert r.handle(REFUSED, 108.5) == RetryIn(1)
    assert r.handle(REFUSED, 109) == RetryIn(1)  # starts exactly at the deadline: still made
    assert r.handle(REFUSED, 109.5) == GiveUp()
    r = RetryingRegistration(initial_delay_s=1, max_delay_s=30, timeout_s=10, start=100)
    assert r.handle(FAILED, 100) == RetryIn(1)
    assert r.handle(FAILED, 101) == RetryIn(2)
    assert r.handle(FAILED, 103) == RetryIn(4)
    assert r.handle(FAILED, 107) == GiveUp()  # 8 s more would end after the deadline
    assert r.handle(REFUSED, 107) == RetryIn(1)  # a cheap retry still fits
