"""The ResourceManager's SlotManager, pure: requests matched with free slots, no sockets."""

from __future__ import annotations

from flott.runtime.resourcemanager.slot_manager import PendingRequest, SlotManager


def request(job_id: str, count: int) -> PendingRequest:
    return PendingRequest(job_id, "jm-host:1", f"jobmaster-{job_id}", "token", count)


def test_one_jobs_slots_are_spread_over_task_executors() -> None:
    """One TaskExecutor process is one core's worth of Python: spread a job before stacking it."""
    sm = SlotManager()
    sm.register("te-1", 2)
    sm.register("te-2", 2)
    sm.request(request("j", 2))
    allocations = sm.match()
    assert sorted(a.resource_id for a in allocations) == ["te-1", "te-2"]
    assert len({a.allocation_id for a in allocations}) == 2
    assert sm.free_slots() == 2 and sm.pending == {}


def test_requests_wait_for_slots_and_freed_slots_are_matched_again() -> None:
    sm = SlotManager()
    sm.register("te-1", 1)
    sm.request(request("a", 1))
    sm.request(request("b", 1))
    (first,) = sm.match()
    assert first.request.job_id == "a" and sm.pending_slots() == 1
    assert sm.match() == []  # no free slot for b
    assert not sm.free("te-1", first.slot_index, "some-other-allocation")  # a stale free is refused
    assert sm.free("te-1", first.slot_index, first.allocation_id)
    (second,) = sm.match()
    assert second.request.job_id == "b"


def test_a_lost_task_executor_names_its_jobs_and_a_cancelled_request_is_dropped() -> None:
    sm = SlotManager()
    sm.register("te-1", 2)
    sm.request(request("a", 1))
    sm.match()
    sm.request(request("b", 3))
    sm.cancel("b")
    assert sm.match() == [] and sm.pending_slots() == 0
    assert sm.unregister("te-1") == {"a"}
    assert sm.total_slots() == 0


def test_a_slot_report_adopts_allocations_but_never_frees() -> None:
    """After a ResourceManager restart the TaskExecutors' reports say which slots are taken."""
    sm = SlotManager()
    sm.register("te-1", 2)
    sm.sync_report("te-1", {1: ("alloc-x", "job-x")})
    assert sm.free_slots() == 1
    sm.sync_report("te-1", {})
    assert sm.free_slots() == 1  # a report may predate an allocation in flight: frees are explicit


def test_workers_to_start_counts_free_slots_and_workers_already_starting() -> None:
    sm = SlotManager()
    sm.register("te-1", 2)
    sm.request(request("a", 7))
    assert sm.workers_to_start(slots_per_worker=2, workers_starting=0) == 3  # 7 - 2 free = 5 -> 3
    assert sm.workers_to_start(slots_per_worker=2, workers_starting=2) == 1
    assert sm.workers_to_start(slots_per_worker=2, workers_starting=3) == 0
