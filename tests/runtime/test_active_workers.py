"""The ResourceManager's own worker processes: replacements, idle and unregistered workers released,
on an explicit clock (no processes)."""

from __future__ import annotations

from flott.runtime.resourcemanager.active_workers import (
    ActiveWorkers,
    ReleaseWorker,
    ReplacementRefused,
    StartWorker,
    Tick,
    WorkerExited,
    WorkerRegistered,
    WorkerStarted,
)
from flott.runtime.resourcemanager.slot_manager import PendingRequest, SlotManager

NOTHING_IDLE = Tick(frozenset(), requests_waiting=False)


def test_crashed_workers_are_replaced_at_most_n_a_minute_and_clean_exits_are_not() -> None:
    workers = ActiveWorkers(max_replacements_per_minute=2)
    assert workers.handle(WorkerExited("w1", 0), 0) == []
    assert workers.handle(WorkerExited("w1", -9), 1) == [StartWorker("w1")]
    assert workers.handle(WorkerExited("w2", 1), 2) == [StartWorker("w2")]
    assert workers.handle(WorkerExited("w3", 1), 3) == [ReplacementRefused("w3", 2)]
    assert workers.handle(WorkerExited("w4", 1), 61.5) == [StartWorker("w4")]  # w1's replacement aged out


def test_without_timeouts_workers_are_never_released() -> None:
    workers = ActiveWorkers(max_replacements_per_minute=10)
    workers.handle(WorkerStarted("never-registers"), 0)
    workers.handle(WorkerStarted("idle"), 0)
    workers.handle(WorkerRegistered("idle"), 1)
    assert workers.handle(Tick(frozenset({"idle"}), requests_waiting=False), 10_000) == []
    assert workers.next_timeout() is None


def test_on_demand_a_worker_that_does_not_register_in_time_is_released_and_not_replaced() -> None:
    workers = ActiveWorkers(10, idle_timeout_s=30, registration_timeout_s=300)
    workers.handle(WorkerStarted("slow"), 0)
    workers.handle(WorkerStarted("ok"), 0)
    workers.handle(WorkerRegistered("ok"), 5)
    assert workers.next_timeout() == 300
    assert workers.handle(NOTHING_IDLE, 300) == []
    assert workers.handle(NOTHING_IDLE, 301) == [ReleaseWorker("slow", "it did not register within 300 s")]
    assert workers.handle(NOTHING_IDLE, 400) == []  # released once
    assert workers.handle(WorkerExited("slow", -15), 402) == []  # its exit was asked for


def test_on_demand_a_worker_idle_past_the_timeout_is_released() -> None:
    workers = ActiveWorkers(10, idle_timeout_s=30, registration_timeout_s=300)
    workers.handle(WorkerStarted("w"), 0)
    workers.handle(WorkerRegistered("w"), 1)
    idle = Tick(frozenset({"w"}), requests_waiting=False)
    assert workers.handle(idle, 2) == []  # idle from now on
    assert workers.next_timeout() == 32
    assert workers.handle(NOTHING_IDLE, 20) == []  # a slot was allocated: the idle time starts again
    assert workers.handle(idle, 25) == []
    assert workers.handle(idle, 55) == []
    # a waiting request is about to use the idle worker: it is not idle
    assert workers.handle(Tick(frozenset({"w"}), requests_waiting=True), 56) == []
    assert workers.handle(idle, 57) == []
    assert workers.handle(idle, 87.5) == [ReleaseWorker("w", "it has been idle for 30 s")]
    assert workers.handle(WorkerExited("w", 0), 88) == []


def test_a_worker_started_by_someone_else_counts_once_it_registers() -> None:
    workers = ActiveWorkers(10, idle_timeout_s=30, registration_timeout_s=300)
    workers.handle(WorkerRegistered("pre-started"), 100)
    idle = Tick(frozenset({"pre-started"}), requests_waiting=False)
    workers.handle(idle, 100)
    assert workers.handle(idle, 131) == [ReleaseWorker("pre-started", "it has been idle for 30 s")]


def test_the_slot_manager_names_its_idle_task_executors() -> None:
    sm = SlotManager()
    sm.register("busy", 2)
    sm.register("idle", 1)
    sm.request(PendingRequest("job", "jm:1", "jobmaster-job", "token", 1))
    (allocation,) = sm.match()
    assert allocation.resource_id == "busy" or allocation.resource_id == "idle"
    assert sm.idle_task_executors() == {"busy", "idle"} - {allocation.resource_id}
    sm.free(allocation.resource_id, allocation.slot_index, allocation.allocation_id)
    assert sm.idle_task_executors() == {"busy", "idle"}
