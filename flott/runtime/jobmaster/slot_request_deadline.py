"""One scheduling attempt's wait for its slots, as a pure state machine (Flink: the pending slot
requests' ``slot.request.timeout``).

An attempt asks the ResourceManager for the slots it needs and waits at most ``timeout_s``. A slot
the ResourceManager matched to the job can vanish with its TaskExecutor before it is offered;
declaring the missing count again every ``redeclare_every_s`` (the shell cancels, then requests:
the ResourceManager's count is replaced, not added to) recovers from that without waiting for the
deadline. The wait ends when the attempt has its slots or is no longer the current one (a restart,
a cancellation); at the deadline with slots missing, the attempt fails with the message
:class:`SlotRequestTimedOut` carries.

The shell sleeps until :meth:`SlotRequestDeadline.next_check` and then reports the job's slots
(:class:`SlotCheck`); times are the shell's monotonic seconds.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SlotCheck:
    running: bool
    """The job is RUNNING (not restarting, cancelling or done)."""
    attempt: int
    slots_needed: int
    slots_assigned: int


@dataclass(frozen=True)
class StopWaiting:
    """The attempt has its slots, or is no longer the current one."""


@dataclass(frozen=True)
class RedeclareSlots:
    missing: int


@dataclass(frozen=True)
class SlotRequestTimedOut:
    message: str


Action = StopWaiting | RedeclareSlots | SlotRequestTimedOut


class SlotRequestDeadline:
    def __init__(self, attempt: int, timeout_s: float, redeclare_every_s: float, start: float) -> None:
        self._attempt = attempt
        self._timeout_s = timeout_s
        self._redeclare_every_s = redeclare_every_s
        self.deadline = start + timeout_s

    def next_check(self, now: float) -> float:
        return min(now + self._redeclare_every_s, self.deadline)

    def handle(self, check: SlotCheck, now: float) -> Action:
        missing = check.slots_needed - check.slots_assigned
        if not check.running or check.attempt != self._attempt or missing <= 0:
            return StopWaiting()
        if now < self.deadline:
            return RedeclareSlots(missing)
        return SlotRequestTimedOut(
            f"could not get {check.slots_needed} slots within {self._timeout_s:.0f}s "
            f"(got {check.slots_assigned}); the cluster has too few free task slots for parallelism "
            f"{check.slots_needed}"
        )
