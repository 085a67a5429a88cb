"""Registration, slots and heartbeats between TaskExecutors, the ResourceManager and JobMasters."""

from __future__ import annotations

import msgspec

from flott.runtime.messages.execution import TaskMetrics


class TaskExecutorRegistration(msgspec.Struct, frozen=True):
    resource_id: str
    rpc_address: str
    data_address: str
    num_slots: int
    pid: int
    hostname: str
    memory_bytes: int = 0
    cpu_cores: int = 1
    slot_report: SlotReport | None = None
    """The slots still allocated when a TaskExecutor registers again (Flink sends its SlotReport
    with the registration), so the ResourceManager does not hand them out twice."""


class RegistrationResponse(msgspec.Struct, frozen=True):
    resource_manager_id: str
    heartbeat_interval_ms: int
    heartbeat_timeout_ms: int


class SlotStatus(msgspec.Struct, frozen=True):
    slot_index: int
    allocation_id: str | None = None
    job_id: str | None = None


class SlotReport(msgspec.Struct, frozen=True):
    slots: list[SlotStatus]


class SlotOffer(msgspec.Struct, frozen=True):
    allocation_id: str
    slot_index: int


class TaskExecutorToJobManagerHeartbeat(msgspec.Struct, frozen=True):
    resource_id: str
    tasks: list[TaskMetrics]


class TaskExecutorInfo(msgspec.Struct, frozen=True):
    """What the ResourceManager knows of a registered TaskExecutor (REST: /taskmanagers)."""

    resource_id: str
    rpc_address: str
    data_address: str
    num_slots: int
    free_slots: int
    last_heartbeat_ms: int
    registered_ms: int
    pid: int
    hostname: str
    memory_bytes: int = 0
    cpu_cores: int = 1
