"""Messages of ``/taskmanagers`` and ``/taskmanagers/:taskmanagerid``.

Memory figures: Flink reports its JVM memory model; flott's TaskExecutors are
Python processes and report only the host's memory and core count. Fields
without a flott counterpart are 0 (see each handler for what is filled from
where).
"""

from __future__ import annotations

import msgspec

from flott.rest.messages.base import ResponseBody


class ResourceProfileInfo(ResponseBody, frozen=True, kw_only=True):
    """Resources in Flink's units (cores; memory in MB)."""

    cpu_cores: float = msgspec.field(name="cpuCores")
    task_heap_memory: int = msgspec.field(default=0, name="taskHeapMemory")
    task_off_heap_memory: int = msgspec.field(default=0, name="taskOffHeapMemory")
    managed_memory: int = msgspec.field(default=0, name="managedMemory")
    network_memory: int = msgspec.field(default=0, name="networkMemory")
    extended_resources: dict[str, float] = msgspec.field(default_factory=dict, name="extendedResources")


class HardwareDescription(ResponseBody, frozen=True, kw_only=True):
    cpu_cores: int = msgspec.field(name="cpuCores")
    physical_memory: int = msgspec.field(name="physicalMemory")
    free_memory: int = msgspec.field(name="freeMemory")
    managed_memory: int = msgspec.field(default=0, name="managedMemory")


class TaskExecutorMemoryConfiguration(ResponseBody, frozen=True, kw_only=True):
    framework_heap: int = msgspec.field(default=0, name="frameworkHeap")
    task_heap: int = msgspec.field(default=0, name="taskHeap")
    framework_off_heap: int = msgspec.field(default=0, name="frameworkOffHeap")
    task_off_heap: int = msgspec.field(default=0, name="taskOffHeap")
    network_memory: int = msgspec.field(default=0, name="networkMemory")
    managed_memory: int = msgspec.field(default=0, name="managedMemory")
    jvm_metaspace: int = msgspec.field(default=0, name="jvmMetaspace")
    jvm_overhead: int = msgspec.field(default=0, name="jvmOverhead")
    total_flink_memory: int = msgspec.field(default=0, name="totalFlinkMemory")
    total_process_memory: int = msgspec.field(default=0, name="totalProcessMemory")


class GarbageCollectorInfo(ResponseBody, frozen=True, kw_only=True):
    name: str
    count: int
    time: int


class TaskManagerMetricsInfo(ResponseBody, frozen=True, kw_only=True):
    heap_used: int = msgspec.field(default=0, name="heapUsed")
    heap_committed: int = msgspec.field(default=0, name="heapCommitted")
    heap_max: int = msgspec.field(default=0, name="heapMax")
    non_heap_used: int = msgspec.field(default=0, name="nonHeapUsed")
    non_heap_committed: int = msgspec.field(default=0, name="nonHeapCommitted")
    non_heap_max: int = msgspec.field(default=0, name="nonHeapMax")
    direct_count: int = msgspec.field(default=0, name="directCount")
    direct_used: int = msgspec.field(default=0, name="directUsed")
    direct_max: int = msgspec.field(default=0, name="directMax")
    mapped_count: int = msgspec.field(default=0, name="mappedCount")
    mapped_used: int = msgspec.field(default=0, name="mappedUsed")
    mapped_max: int = msgspec.field(default=0, name="mappedMax")
    netty_shuffle_memory_segments_available: int = msgspec.field(
        default=0, name="nettyShuffleMemorySegmentsAvailable"
    )
    netty_shuffle_memory_segments_used: int = msgspec.field(default=0, name="nettyShuffleMemorySegmentsUsed")
    netty_shuffle_memory_segments_total: int = msgspec.field(
        default=0, name="nettyShuffleMemorySegmentsTotal"
    )
    netty_shuffle_memory_available: int = msgspec.field(default=0, name="nettyShuffleMemoryAvailable")
    netty_shuffle_memory_used: int = msgspec.field(default=0, name="nettyShuffleMemoryUsed")
    netty_shuffle_memory_total: int = msgspec.field(default=0, name="nettyShuffleMemoryTotal")
    garbage_collectors: list[GarbageCollectorInfo] = msgspec.field(
        default_factory=list, name="garbageCollectors"
    )


class SlotInfo(ResponseBody, frozen=True, kw_only=True):
    job_id: str = msgspec.field(name="jobId")
    resource: ResourceProfileInfo
    assigned_tasks: int = msgspec.field(name="assignedTasks")


class TaskManagerInfo(ResponseBody, frozen=True, kw_only=True):
    """One TaskManager of ``GET /taskmanagers``.

    ``timeSinceLastHeartbeat`` is, despite its name, the time of the last
    heartbeat in epoch milliseconds (as Flink fills it and its web UI reads it).
    """

    id: str
    path: str
    data_port: int = msgspec.field(name="dataPort")
    jmx_port: int = msgspec.field(default=-1, name="jmxPort")
    time_since_last_heartbeat: int = msgspec.field(name="timeSinceLastHeartbeat")
    slots_number: int = msgspec.field(name="slotsNumber")
    free_slots: int = msgspec.field(name="freeSlots")
    total_resource: ResourceProfileInfo = msgspec.field(name="totalResource")
    free_resource: ResourceProfileInfo = msgspec.field(name="freeResource")
    hardware: HardwareDescription
    memory_configuration: TaskExecutorMemoryConfiguration = msgspec.field(name="memoryConfiguration")
    blocked: bool = False


class TaskManagersInfo(ResponseBody, frozen=True, kw_only=True):
    """``GET /taskmanagers``."""

    taskmanagers: list[TaskManagerInfo]


class TaskManagerDetailsInfo(ResponseBody, frozen=True, kw_only=True):
    """``GET /taskmanagers/:taskmanagerid``."""

    id: str
    path: str
    data_port: int = msgspec.field(name="dataPort")
    jmx_port: int = msgspec.field(default=-1, name="jmxPort")
    time_since_last_heartbeat: int = msgspec.field(name="timeSinceLastHeartbeat")
    slots_number: int = msgspec.field(name="slotsNumber")
    free_slots: int = msgspec.field(name="freeSlots")
    total_resource: ResourceProfileInfo = msgspec.field(name="totalResource")
    free_resource: ResourceProfileInfo = msgspec.field(name="freeResource")
    hardware: HardwareDescription
    memory_configuration: TaskExecutorMemoryConfiguration = msgspec.field(name="memoryConfiguration")
    blocked: bool = False
    allocated_slots: list[SlotInfo] = msgspec.field(name="allocatedSlots")
    metrics: TaskManagerMetricsInfo
