"""The TaskExecutor's slot table, driven by events and an explicit clock (no sockets, no asyncio)."""

from __future__ import annotations

import pytest

from flott.errors import ClusterError, SlotAllocationError
from flott.runtime.messages.cluster import SlotStatus
from flott.runtime.taskexecutor.slot_table import (
    AllocateSlot,
    CheckTimeouts,
    FreeJobSlots,
    FreeSlot,
    KeepOnlyJobs,
    MarkSlotActive,
    SlotFreed,
    SlotState,
    TaskSlotTable,
)


def test_allocate_offer_accept_free() -> None:
    table = TaskSlotTable(2, slot_timeout_s=10)
    assert table.handle(AllocateSlot(1, "job", "alloc-1"), 0) == []
    assert table.slots[1].state is SlotState.ALLOCATED and table.is_allocated("alloc-1")
    assert not table.is_active("alloc-1")
    assert table.slot_report().slots == [SlotStatus(0, None, None), SlotStatus(1, "alloc-1", "job")]
    table.handle(MarkSlotActive("alloc-1"), 1)
    assert table.is_active("alloc-1", "job") and not table.is_active("alloc-1", "other")
    assert table.next_timeout() is None  # an active slot does not expire
    assert table.handle(FreeSlot("alloc-1", "job finished"), 2) == [
        SlotFreed(1, "alloc-1", "job", "job finished", last_of_job=True)
    ]
    assert table.slots[1].state is SlotState.FREE and not table.has_job("job")
    assert table.handle(FreeSlot("alloc-1", "again"), 3) == []  # a late free changes nothing


def test_taken_or_missing_slots_are_typed_errors_and_a_retried_request_is_accepted() -> None:
    table = TaskSlotTable(1, slot_timeout_s=10)
    table.handle(AllocateSlot(0, "job", "a"), 0)
    table.handle(AllocateSlot(0, "job", "a"), 0)  # the same request again (retried RPC)
    with pytest.raises(SlotAllocationError, match="already allocated to a"):
        table.handle(AllocateSlot(0, "job", "b"), 0)
    with pytest.raises(SlotAllocationError, match="has 1 slot"):
        table.handle(AllocateSlot(3, "job", "c"), 0)
    assert issubclass(SlotAllocationError, ClusterError)


def test_an_allocation_not_taken_up_expires_unless_its_offer_is_in_flight() -> None:
    table = TaskSlotTable(2, slot_timeout_s=10)
    table.handle(AllocateSlot(0, "job", "a"), 0)
    table.handle(AllocateSlot(1, "job", "b"), 5)
    assert table.next_timeout() == 10
    assert table.handle(CheckTimeouts(), 9.9) == []
    assert table.handle(CheckTimeouts(offering=frozenset({"a"})), 10) == []  # still being offered
    (freed,) = table.handle(CheckTimeouts(), 10)
    assert freed.allocation_id == "a" and not freed.last_of_job and "not taken up" in freed.cause
    table.handle(MarkSlotActive("b"), 12)
    assert table.handle(CheckTimeouts(), 100) == []


def test_a_job_leaving_frees_all_its_slots_and_the_last_one_says_so() -> None:
    table = TaskSlotTable(3, slot_timeout_s=10)
    table.handle(AllocateSlot(0, "j1", "a"), 0)
    table.handle(AllocateSlot(1, "j1", "b"), 0)
    table.handle(AllocateSlot(2, "j2", "c"), 0)
    freed = table.handle(FreeJobSlots("j1", "JobManager lost"), 1)
    assert [(f.index, f.last_of_job) for f in freed] == [(0, False), (1, True)]
    assert table.has_job("j2")
    freed = table.handle(KeepOnlyJobs(frozenset({"j1"}), "new leader"), 2)
    assert [(f.allocation_id, f.last_of_job) for f in freed] == [("c", True)]
    assert all(s.state is SlotState.FREE for s in table.slots)
