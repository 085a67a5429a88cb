"""A scheduling attempt's wait for slots (slot.request.timeout), on an explicit clock."""

from __future__ import annotations

from flott.runtime.jobmaster.slot_request_deadline import (
    RedeclareSlots,
    SlotCheck,
    SlotRequestDeadline,
    SlotRequestTimedOut,
    StopWaiting,
)


def test_missing_slots_are_declared_again_until_the_deadline_fails_the_attempt() -> None:
    wait = SlotRequestDeadline(attempt=0, timeout_s=10, redeclare_every_s=3, start=100)
    assert wait.next_check(100) == 103
    assert wait.handle(SlotCheck(True, 0, 4, 1), 103) == RedeclareSlots(3)
    assert wait.handle(SlotCheck(True, 0, 4, 3), 106) == RedeclareSlots(1)
    assert wait.next_check(109) == 110  # never past the deadline
    assert wait.handle(SlotCheck(True, 0, 4, 3), 110) == SlotRequestTimedOut(
        "could not get 4 slots within 10s (got 3); the cluster has too few free task slots for parallelism 4"
    )


def test_the_wait_ends_when_the_slots_came_or_the_attempt_is_over() -> None:
    wait = SlotRequestDeadline(attempt=2, timeout_s=10, redeclare_every_s=3, start=0)
    assert wait.handle(SlotCheck(True, 2, 4, 4), 3) == StopWaiting()
    assert wait.handle(SlotCheck(True, 3, 4, 0), 3) == StopWaiting()  # restarted: a new attempt waits
    assert wait.handle(SlotCheck(False, 2, 4, 0), 11) == StopWaiting()  # cancelled or restarting
