"""Slot bookkeeping of the ResourceManager (Flink: SlotManager), pure and synchronous.

Knows every registered TaskExecutor's slots and the pending slot requests of
jobs. :meth:`SlotManager.match` pairs pending requests with free slots and
returns the allocations to carry out; it spreads one job's slots over as many
TaskExecutors as it can, because with Python's GIL each TaskExecutor process
is one core's worth of work.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from flott.runtime.jobgraph import new_id


@dataclass
class SlotState:
    allocation_id: str | None = None
    job_id: str | None = None


@dataclass
class PendingRequest:
    job_id: str
    job_master_address: str
    job_master_endpoint: str
    job_master_token: str
    remaining: int


@dataclass(frozen=True)
class Allocation:
    resource_id: str
    slot_index: int
    allocation_id: str
    request: PendingRequest


@dataclass
class TaskExecutorSlots:
    resource_id: str
    slots: list[SlotState] = field(default_factory=list)

    def free_indices(self) -> list[int]:
        return [i for i, s in enumerate(self.slots) if s.allocation_id is None]


class SlotManager:
    def __init__(self) -> None:
        self.task_executors: dict[str, TaskExecutorSlots] = {}
        self.pending: OrderedDict[str, PendingRequest] = OrderedDict()

    def register(self, resource_id: str, num_slots: int) -> None:
        self.task_executors[resource_id] = TaskExecutorSlots(
            resource_id, [SlotState() for _ in range(num_slots)]
        )

    def unregister(self, resource_id: str) -> set[str]:
        """Forget a TaskExecutor; returns the jobs that had slots on it."""
        te = self.task_executors.pop(resource_id, None)
        return {s.job_id for s in te.slots if s.job_id} if te else set()

    def request(self, req: PendingRequest) -> None:
        existing = self.pending.get(req.job_id)
        if existing is not None:
            existing.remaining += req.remaining
        else:
            self.pending[req.job_id] = req

    def cancel(self, job_id: str) -> None:
        self.pending.pop(job_id, None)

    def free(self, resource_id: str, slot_index: int, allocation_id: str) -> bool:
        te = self.task_executors.get(resource_id)
        if te is None or slot_index >= len(te.slots):
            return False
        slot = te.slots[slot_index]
        if slot.allocation_id != allocation_id:
            return False
        te.slots[slot_index] = SlotState()
        return True

    def sync_report(self, resource_id: str, allocated: dict[int, tuple[str, str]]) -> None:
        """Adopt allocations the TaskExecutor reports (e.g. after the RM restarted).

        Freed slots are reported explicitly (notify_slot_available), never inferred
        from a report: a report may predate an allocation still in flight.
        """
        te = self.task_executors.get(resource_id)
        if te is None:
            return
        for i, (alloc, job) in allocated.items():
            if i < len(te.slots) and te.slots[i].allocation_id is None:
                te.slots[i] = SlotState(alloc, job)

    def match(self) -> list[Allocation]:
        out: list[Allocation] = []
        for job_id, req in list(self.pending.items()):
            while req.remaining > 0:
                candidates = [te for te in self.task_executors.values() if te.free_indices()]
                if not candidates:
                    return out
                used = {a.resource_id for a in out if a.request.job_id == job_id}
                candidates.sort(key=lambda te: (te.resource_id in used, -len(te.free_indices())))
                te = candidates[0]
                idx = te.free_indices()[0]
                alloc = new_id()
                te.slots[idx] = SlotState(alloc, job_id)
                out.append(Allocation(te.resource_id, idx, alloc, req))
                req.remaining -= 1
            del self.pending[job_id]
        return out

    def total_slots(self) -> int:
        return sum(len(te.slots) for te in self.task_executors.values())

    def free_slots(self) -> int:
        return sum(len(te.free_indices()) for te in self.task_executors.values())

    def idle_task_executors(self) -> frozenset[str]:
        """The TaskExecutors none of whose slots is allocated."""
        return frozenset(
            rid for rid, te in self.task_executors.items() if len(te.free_indices()) == len(te.slots)
        )

    def pending_slots(self) -> int:
        return sum(r.remaining for r in self.pending.values())

    def workers_to_start(self, slots_per_worker: int, workers_starting: int) -> int:
        """Active mode: how many more TaskExecutors the pending requests need, beyond the free
        slots and the slots of the workers already starting (each ``slots_per_worker`` slots)."""
        missing = self.pending_slots() - self.free_slots() - workers_starting * slots_per_worker
        return -(-missing // slots_per_worker) if missing > 0 else 0
