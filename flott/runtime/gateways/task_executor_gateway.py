"""The TaskExecutor's RPC surface."""

from __future__ import annotations

from typing import Protocol

from flott.runtime.entrypoint.log_files import LogFileInfo
from flott.runtime.entrypoint.thread_dump import ThreadStack
from flott.runtime.messages.execution import TaskDeploymentDescriptor
from flott.runtime.metrics.flame_graph import StackSample
from flott.runtime.metrics.query_service import MetricDump

TASK_EXECUTOR_ENDPOINT = "taskexecutor"


class TaskExecutorGateway(Protocol):
    async def request_slot(
        self,
        slot_index: int,
        job_id: str,
        allocation_id: str,
        job_master_address: str,
        job_master_endpoint: str,
        job_master_token: str,
    ) -> None: ...

    async def submit_task(self, tdd: TaskDeploymentDescriptor, job_master_token: str) -> None: ...

    async def cancel_task(self, execution_id: str) -> None: ...

    async def free_slot(self, allocation_id: str, cause: str) -> None: ...

    async def release_partitions(self, partition_ids: list[str]) -> None: ...

    async def disconnect_job_manager(self, job_id: str, cause: str) -> None: ...

    async def trigger_checkpoint(
        self,
        execution_id: str,
        checkpoint_id: int,
        timestamp: int,
        checkpoint_type: str,
        location: str,
        drain: bool = False,
    ) -> None:
        """Inject a barrier at this source task; it snapshots its state under ``location``."""

    async def notify_checkpoint_complete(self, execution_id: str, checkpoint_id: int, final: bool) -> None:
        """Checkpoint ``checkpoint_id`` completed (commit transactional sinks). ``final``: every source
        of the job had reached the end of its input in it, so sources may finish now."""

    async def notify_checkpoint_aborted(self, execution_id: str, checkpoint_id: int) -> None: ...

    async def deliver_coordination_request(
        self, execution_id: str, operator_id: str, request: bytes, *, timeout: float | None = None
    ) -> bytes:
        """Hand a client's request (opaque bytes) to an operator of a running task; its answer."""

    async def request_log_list(self) -> list[LogFileInfo]:
        """The files of the TaskExecutor's log directory."""

    async def request_log_file(self, kind: str, name: str, max_bytes: int) -> bytes:
        """The last ``max_bytes`` of one: ``kind`` file (``name``), log (its own) or stdout."""

    async def request_thread_dump(self) -> list[ThreadStack]:
        """The stacks of the TaskExecutor's Python threads."""

    async def request_thread_samples(
        self,
        job_id: str,
        vertex_id: str,
        subtasks: list[int],
        num_samples: int,
        delay_ms: int,
        max_depth: int,
        *,
        timeout: float | None = None,
    ) -> list[StackSample]:
        """Stacks of the threads running those subtasks of the vertex (a flame graph's samples)."""

    async def request_metric_dump(self, *, timeout: float | None = None) -> MetricDump:
        """Every metric of the TaskExecutor (Flink's MetricQueryService answer)."""

    async def shutdown(self, *, timeout: float | None = None) -> None: ...
