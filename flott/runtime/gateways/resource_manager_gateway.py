"""The ResourceManager's RPC surface."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

import msgspec

from flott.runtime.entrypoint.log_files import LogFileInfo
from flott.runtime.entrypoint.thread_dump import ThreadStack
from flott.runtime.messages.cluster import (
    RegistrationResponse,
    SlotReport,
    TaskExecutorInfo,
    TaskExecutorRegistration,
)
from flott.runtime.metrics.flame_graph import StackSample
from flott.runtime.metrics.query_service import MetricDump

RESOURCE_MANAGER_ENDPOINT = "resourcemanager"


class SlotCapacity(msgspec.Struct, frozen=True):
    """What the cluster has to run jobs on (admission control asks before accepting a job)."""

    total_slots: int
    """Slots of the registered TaskExecutors plus those of TaskExecutors being started."""
    free_slots: int
    task_executors: int
    """TaskExecutors registered."""
    can_grow: bool
    """The ResourceManager starts TaskExecutors on demand (more slots appear when jobs ask)."""
    task_executors_starting: int = 0
    """TaskExecutors this cluster started itself that have not registered yet (their slots are
    in ``total_slots``: the cluster will have them, so a job is judged against them)."""


def slot_capacity(
    registered_slots: Mapping[str, int],
    started: Iterable[str],
    slots_per_started: int,
    free_slots: int,
    can_grow: bool,
) -> SlotCapacity:
    """The capacity of a cluster whose TaskExecutors ``registered_slots`` (resource id: slots)
    are registered and ``started`` (resource ids of the processes the cluster itself started,
    each with ``slots_per_started`` slots) are running; a started one not registered yet counts
    as starting, so a job submitted while the cluster's own TaskExecutors are still coming up is
    judged against the slots the cluster will have, not refused for the ones not there yet."""
    starting = len({rid for rid in started if rid not in registered_slots})
    return SlotCapacity(
        total_slots=sum(registered_slots.values()) + starting * slots_per_started,
        free_slots=free_slots,
        task_executors=len(registered_slots),
        can_grow=can_grow,
        task_executors_starting=starting,
    )


class ResourceManagerGateway(Protocol):
    async def register_task_executor(
        self, registration: TaskExecutorRegistration
    ) -> RegistrationResponse: ...

    async def heartbeat_from_task_executor(
        self, resource_id: str, slot_report: SlotReport, *, timeout: float | None = None
    ) -> None: ...

    async def request_slots(
        self,
        job_id: str,
        job_master_address: str,
        job_master_endpoint: str,
        job_master_token: str,
        count: int,
    ) -> None:
        """Ask for ``count`` slots; TaskExecutors offer them to the JobMaster as they are found."""

    async def cancel_slot_request(self, job_id: str) -> None: ...

    async def notify_slot_available(self, resource_id: str, slot_index: int, allocation_id: str) -> None: ...

    async def request_task_executor_infos(self) -> list[TaskExecutorInfo]: ...

    async def request_slot_capacity(self) -> SlotCapacity: ...

    async def request_task_manager_log_list(self, resource_id: str) -> list[LogFileInfo]: ...

    async def request_task_manager_thread_dump(self, resource_id: str) -> list[ThreadStack]: ...

    async def request_task_manager_thread_samples(
        self, resource_id: str, job_id: str, vertex_id: str, subtasks: list[int],
        num_samples: int, delay_ms: int, max_depth: int, *, timeout: float | None = None,
    ) -> list[StackSample]: ...

    async def request_task_manager_metric_dumps(
        self, timeout_s: float, *, timeout: float | None = None
    ) -> dict[str, MetricDump]:
        """Every registered TaskExecutor's metrics (those that answered within ``timeout_s``)."""

    async def request_task_manager_log_file(
        self, resource_id: str, kind: str, name: str, max_bytes: int
    ) -> bytes: ...
