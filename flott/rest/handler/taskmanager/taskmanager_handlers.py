"""``/taskmanagers``, ``/taskmanagers/:taskmanagerid`` and their metrics.

What is real and what is filled in: id, RPC path, data port, slots, free
slots, last heartbeat, host cores and memory come from the ResourceManager's
registration data. ``…/metrics`` are what each TaskExecutor reports of
itself through the metric fetcher, wherever it runs (``Status.JVM.*`` mapped
to its Python process: :mod:`flott.runtime.metrics.process_metrics`). The
list and details views read RSS from the local process table when the
TaskExecutor runs on the same host and leave it 0 otherwise; in the details
view RSS stands in for Flink's heap figures.
Resource profiles use Flink's default of one CPU core per slot.
"""

from __future__ import annotations

import asyncio
import socket
from collections import defaultdict

import psutil

from flott.errors import JobNotFoundError
from flott.rest.errors import RestNotFoundError
from flott.rest.handler.handler import HandlerRequest, QueryParam, RestRoute
from flott.rest.handler.metric_fetcher import MetricStore, fetched_metrics
from flott.rest.handler.metrics import (
    AGG_PARAM,
    GET_PARAM,
    aggregated_metrics,
    metric_collection,
    numeric_metrics,
)
from flott.rest.messages.common import AggregatedMetric, Metric
from flott.rest.messages.taskmanager import (
    GarbageCollectorInfo,
    HardwareDescription,
    ResourceProfileInfo,
    SlotInfo,
    TaskExecutorMemoryConfiguration,
    TaskManagerDetailsInfo,
    TaskManagerInfo,
    TaskManagerMetricsInfo,
    TaskManagersInfo,
)
from flott.runtime.gateways.dispatcher_gateway import DispatcherGateway
from flott.runtime.messages.cluster import TaskExecutorInfo

_TERMINAL = {"FINISHED", "CANCELED", "FAILED"}


def process_metrics(pid: int | None = None) -> dict[str, float]:
    """``Status.Process.*`` of a process on this host (this one by default); empty if it is gone."""
    try:
        proc = psutil.Process(pid) if pid is not None else psutil.Process()
        with proc.oneshot():
            cpu = proc.cpu_times()
            mem = proc.memory_info()
            return {
                "Status.Process.CPU.Time": (cpu.user + cpu.system) * 1e9,
                "Status.Process.Memory.RSS": float(mem.rss),
                "Status.Process.Memory.VMS": float(mem.vms),
                "Status.Process.Threads.Count": float(proc.num_threads()),
            }
    except (psutil.Error, OSError):
        return {}


def _local_metrics(info: TaskExecutorInfo) -> dict[str, float]:
    if info.hostname != socket.gethostname():
        return {}
    return process_metrics(info.pid)


def _port(address: str) -> int:
    _, _, port = address.rpartition(":")
    return int(port) if port.isdigit() else -1


def _task_manager_info(info: TaskExecutorInfo) -> TaskManagerInfo:
    metrics = _local_metrics(info)
    free_memory = psutil.virtual_memory().available if metrics else 0
    return TaskManagerInfo(
        id=info.resource_id,
        path=info.rpc_address,
        data_port=_port(info.data_address),
        time_since_last_heartbeat=info.last_heartbeat_ms,
        slots_number=info.num_slots,
        free_slots=info.free_slots,
        total_resource=ResourceProfileInfo(cpu_cores=float(info.num_slots)),
        free_resource=ResourceProfileInfo(cpu_cores=float(info.free_slots)),
        hardware=HardwareDescription(
            cpu_cores=info.cpu_cores, physical_memory=info.memory_bytes, free_memory=free_memory
        ),
        memory_configuration=TaskExecutorMemoryConfiguration(
            total_process_memory=int(metrics.get("Status.Process.Memory.RSS", 0))
        ),
    )


async def _task_executor(req: HandlerRequest) -> TaskExecutorInfo:
    tm_id = req.hex_id("taskmanagerid")
    for info in await (await req.gateway()).request_task_executor_infos():
        if info.resource_id == tm_id:
            return info
    raise RestNotFoundError(f"Could not find TaskExecutor {tm_id}.")


task_executor_of = _task_executor
"""The TaskExecutor named by the ``taskmanagerid`` path parameter; 404 if none is registered."""


async def _allocated_slots(gateway: DispatcherGateway, resource_id: str) -> list[SlotInfo]:
    """Slots of running jobs on this TaskExecutor: subtask i of every vertex shares the job's slot i."""
    running = [d.job_id for d in await gateway.request_multiple_job_details() if d.status not in _TERMINAL]

    async def slots_of(job_id: str) -> list[SlotInfo]:
        try:
            graph = await gateway.request_execution_graph(job_id)
        except JobNotFoundError:
            return []
        per_slot: dict[int, int] = defaultdict(int)
        for v in graph.vertices:
            for ex in v.subtasks:
                if ex.resource_id == resource_id and ex.state not in _TERMINAL:
                    per_slot[ex.subtask_index] += 1
        return [
            SlotInfo(job_id=job_id, resource=ResourceProfileInfo(cpu_cores=1.0), assigned_tasks=n)
            for _, n in sorted(per_slot.items())
        ]

    return [s for slots in await asyncio.gather(*(slots_of(j) for j in running)) for s in slots]


async def list_task_managers(req: HandlerRequest) -> TaskManagersInfo:
    infos = await (await req.gateway()).request_task_executor_infos()
    return TaskManagersInfo(taskmanagers=[_task_manager_info(i) for i in infos])


async def task_manager_details(req: HandlerRequest) -> TaskManagerDetailsInfo:
    info = await _task_executor(req)
    base = _task_manager_info(info)
    metrics = _local_metrics(info)
    rss = int(metrics.get("Status.Process.Memory.RSS", 0))
    return TaskManagerDetailsInfo(
        id=base.id,
        path=base.path,
        data_port=base.data_port,
        time_since_last_heartbeat=base.time_since_last_heartbeat,
        slots_number=base.slots_number,
        free_slots=base.free_slots,
        total_resource=base.total_resource,
        free_resource=base.free_resource,
        hardware=base.hardware,
        memory_configuration=base.memory_configuration,
        allocated_slots=await _allocated_slots(await req.gateway(), info.resource_id),
        metrics=TaskManagerMetricsInfo(
            heap_used=rss, heap_committed=rss, heap_max=info.memory_bytes,
            garbage_collectors=_garbage_collectors(_reported_metrics(info, await fetched_metrics(req))),
        ),
    )


def _garbage_collectors(metrics: dict[str, float | str]) -> list[GarbageCollectorInfo]:
    """Flink's ``garbageCollectors`` from the TaskExecutor's ``Status.JVM.GarbageCollector.*``
    gauges: one per generation of Python's collector (``gen0`` .. ``gen2``), count and ms."""
    prefix = "Status.JVM.GarbageCollector."
    names = sorted({k[len(prefix):].rsplit(".", 1)[0] for k in metrics if k.startswith(prefix)})
    return [
        GarbageCollectorInfo(
            name=n,
            count=int(float(metrics.get(f"{prefix}{n}.Count", 0))),
            time=int(float(metrics.get(f"{prefix}{n}.Time", 0))),
        )
        for n in names
    ]


def _reported_metrics(info: TaskExecutorInfo, store: MetricStore) -> dict[str, float | str]:
    """What the TaskExecutor reports of itself (wherever it runs); the local process table only
    if it did not answer the last fetch."""
    reported = store.taskmanagers.get(info.resource_id)
    if reported is not None:
        return dict(reported)
    return dict(_local_metrics(info))


async def task_manager_metrics(req: HandlerRequest) -> list[Metric]:
    info = await _task_executor(req)
    return metric_collection(req, _reported_metrics(info, await fetched_metrics(req)))


async def aggregated_task_manager_metrics(req: HandlerRequest) -> list[AggregatedMetric]:
    wanted = set(req.query_list("taskmanagers"))
    infos = await (await req.gateway()).request_task_executor_infos()
    store = await fetched_metrics(req)
    return aggregated_metrics(
        req,
        [
            numeric_metrics(_reported_metrics(i, store))
            for i in infos
            if not wanted or i.resource_id in wanted
        ],
    )


ROUTES = [
    RestRoute(
        "GET",
        "/taskmanagers",
        list_task_managers,
        summary="All registered TaskManagers.",
        response_type=TaskManagersInfo,
        operation_id="getTaskManagersOverview",
        shared=True,
    ),
    RestRoute(
        "GET",
        "/taskmanagers/metrics",
        aggregated_task_manager_metrics,
        summary="TaskManager metrics aggregated over TaskManagers.",
        response_type=list[AggregatedMetric],
        operation_id="getAggregatedTaskManagerMetrics",
        query=(GET_PARAM, AGG_PARAM, QueryParam("taskmanagers", "Comma-separated TaskManager ids.")),
    ),
    RestRoute(
        "GET",
        "/taskmanagers/{taskmanagerid}",
        task_manager_details,
        summary="One TaskManager with its allocated slots.",
        response_type=TaskManagerDetailsInfo,
        operation_id="getTaskManagerDetails",
    ),
    RestRoute(
        "GET",
        "/taskmanagers/{taskmanagerid}/metrics",
        task_manager_metrics,
        summary="Metrics of a TaskManager (Status.JVM.* mapped to its Python process).",
        response_type=list[Metric],
        operation_id="getTaskManagerMetrics",
        query=(GET_PARAM,),
    ),
]
