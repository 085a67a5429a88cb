"""A TaskExecutor's slots as a pure state machine (Flink: TaskSlotTable).

Each slot is FREE, ALLOCATED (the ResourceManager assigned it to a job's allocation; the slot is
being offered to that job's JobMaster) or ACTIVE (the JobMaster accepted the offer; tasks of that
allocation may be deployed into it). Events come in with the time (``now``, monotonic seconds);
the table answers with :class:`SlotFreed` actions the shell carries out (cancel the allocation's
tasks, tell the ResourceManager, drop the job's JobManager connection when the job has no slot
left here). An ALLOCATED slot that is not activated within ``slot_timeout_s``
(``taskmanager.slot.timeout``, falling back to ``pekko.ask.timeout`` as in Flink) is freed by a
:class:`CheckTimeouts`: an allocation nobody takes up must not hold the slot forever.

Allocating a slot that another allocation holds, or a slot this TaskExecutor does not have, is a
:class:`~flott.errors.SlotAllocationError` (the ResourceManager's view was stale; it retries
elsewhere). Freeing or activating an allocation the table does not know is a late message and
changes nothing (Flink answers ``false`` there, not an error).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from flott.errors import SlotAllocationError
from flott.runtime.messages.cluster import SlotReport, SlotStatus


class SlotState(enum.Enum):
    FREE = "FREE"
    ALLOCATED = "ALLOCATED"
    ACTIVE = "ACTIVE"


@dataclass
class TaskSlot:
    index: int
    state: SlotState = SlotState.FREE
    allocation_id: str | None = None
    job_id: str | None = None
    timeout_at: float | None = None
    """ALLOCATED only: when the allocation expires unless the slot is activated first."""


# -- events -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AllocateSlot:
    index: int
    job_id: str
    allocation_id: str


@dataclass(frozen=True)
class MarkSlotActive:
    """The job's JobMaster accepted the offer of this allocation."""

    allocation_id: str


@dataclass(frozen=True)
class FreeSlot:
    allocation_id: str
    cause: str


@dataclass(frozen=True)
class FreeJobSlots:
    """The job leaves this TaskExecutor (its JobManager is gone or wrote us off)."""

    job_id: str
    cause: str


@dataclass(frozen=True)
class KeepOnlyJobs:
    """Free every slot of a job not named (re-registration, a new ResourceManager leader)."""

    job_ids: frozenset[str]
    cause: str


@dataclass(frozen=True)
class CheckTimeouts:
    """Time passed: free ALLOCATED slots whose allocation expired, except those whose offer is
    still in flight (``offering``: the offer ends in an answer, accepted or not, of its own)."""

    offering: frozenset[str] = frozenset()


Event = AllocateSlot | MarkSlotActive | FreeSlot | FreeJobSlots | KeepOnlyJobs | CheckTimeouts


# -- actions ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SlotFreed:
    index: int
    allocation_id: str
    job_id: str
    cause: str
    last_of_job: bool
    """No slot of the job is left here: its JobManager connection may go."""


class TaskSlotTable:
    """See the module docstring."""

    def __init__(self, num_slots: int, slot_timeout_s: float) -> None:
        self.slots = [TaskSlot(i) for i in range(num_slots)]
        self.slot_timeout_s = slot_timeout_s

    # -- queries ------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.slots)

    def slot_report(self) -> SlotReport:
        return SlotReport([SlotStatus(s.index, s.allocation_id, s.job_id) for s in self.slots])

    def by_allocation(self, allocation_id: str) -> TaskSlot | None:
        for slot in self.slots:
            if slot.allocation_id == allocation_id:
                return slot
        return None

    def is_active(self, allocation_id: str, job_id: str | None = None) -> bool:
        slot = self.by_allocation(allocation_id)
        return slot is not None and slot.state is SlotState.ACTIVE and job_id in (None, slot.job_id)

    def is_allocated(self, allocation_id: str) -> bool:
        return self.by_allocation(allocation_id) is not None

    def has_job(self, job_id: str) -> bool:
        return any(s.job_id == job_id for s in self.slots)

    def next_timeout(self) -> float | None:
        times = [s.timeout_at for s in self.slots if s.timeout_at is not None]
        return min(times) if times else None

    # -- the state machine --------------------------------------------------------------------

    def handle(self, event: Event, now: float) -> list[SlotFreed]:
        if isinstance(event, AllocateSlot):
            self._allocate(event, now)
            return []
        if isinstance(event, MarkSlotActive):
            slot = self.by_allocation(event.allocation_id)
            if slot is not None:
                slot.state, slot.timeout_at = SlotState.ACTIVE, None
            return []
        if isinstance(event, FreeSlot):
            slot = self.by_allocation(event.allocation_id)
            return [self._free(slot, event.cause)] if slot is not None else []
        if isinstance(event, FreeJobSlots):
            return [self._free(s, event.cause) for s in self.slots if s.job_id == event.job_id]
        if isinstance(event, KeepOnlyJobs):
            return [
                self._free(s, event.cause) for s in self.slots
                if s.job_id is not None and s.job_id not in event.job_ids
            ]  # fmt: skip
        return [
            self._free(s, f"slot allocation {s.allocation_id} not taken up in {self.slot_timeout_s:.0f} s")
            for s in self.slots
            if s.timeout_at is not None and now >= s.timeout_at and s.allocation_id not in event.offering
        ]

    def _allocate(self, event: AllocateSlot, now: float) -> None:
        if not 0 <= event.index < len(self.slots):
            raise SlotAllocationError(
                f"slot {event.index} requested, this TaskExecutor has {len(self.slots)} slot(s)"
            )
        slot = self.slots[event.index]
        if slot.state is not SlotState.FREE:
            if slot.allocation_id == event.allocation_id and slot.job_id == event.job_id:
                return  # the same request again (a retried RPC)
            raise SlotAllocationError(f"slot {event.index} is already allocated to {slot.allocation_id}")
        other = self.by_allocation(event.allocation_id)
        if other is not None:
            raise SlotAllocationError(
                f"allocation {event.allocation_id} already holds slot {other.index} here"
            )
        slot.state, slot.allocation_id, slot.job_id = SlotState.ALLOCATED, event.allocation_id, event.job_id
        slot.timeout_at = now + self.slot_timeout_s

    def _free(self, slot: TaskSlot, cause: str) -> SlotFreed:
        assert slot.allocation_id is not None and slot.job_id is not None
        freed = (slot.index, slot.allocation_id, slot.job_id)
        slot.state, slot.allocation_id, slot.job_id, slot.timeout_at = SlotState.FREE, None, None, None
        return SlotFreed(*freed, cause, last_of_job=not self.has_job(freed[2]))
