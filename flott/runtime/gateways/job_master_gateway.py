"""The JobMaster's RPC surface (fenced by the JobMaster's leader token)."""

from __future__ import annotations

from typing import Any, Protocol

from flott.runtime.checkpoint.metadata import TaskStateSnapshot
from flott.runtime.messages.cluster import SlotOffer, TaskExecutorToJobManagerHeartbeat
from flott.runtime.messages.execution import TaskExecutionState
from flott.runtime.messages.job import ExecutionGraphInfo
from flott.runtime.messages.task_output import TaskOutputBatch


def job_master_endpoint(job_id: str) -> str:
    return f"jobmaster-{job_id}"


class JobMasterGateway(Protocol):
    async def offer_slots(
        self, resource_id: str, task_executor_address: str, data_address: str, offers: list[SlotOffer]
    ) -> list[SlotOffer]:
        """Accepts the offers it can use; returns the accepted ones."""

    async def update_task_execution_state(self, state: TaskExecutionState) -> bool: ...

    async def heartbeat_from_task_executor(
        self, heartbeat: TaskExecutorToJobManagerHeartbeat, *, timeout: float | None = None
    ) -> None: ...

    async def report_task_output(self, batch: TaskOutputBatch) -> bool:
        """Lines a task wrote, for the job's log; False once the log keeps no more of them."""

    async def disconnect_task_manager(self, resource_id: str, cause: str) -> None: ...

    async def cancel(self) -> None: ...

    async def request_job(self) -> ExecutionGraphInfo: ...

    # -- checkpoints -------------------------------------------------------------------------

    async def acknowledge_checkpoint(
        self, execution_id: str, checkpoint_id: int, snapshot: TaskStateSnapshot
    ) -> None: ...

    async def decline_checkpoint(self, execution_id: str, checkpoint_id: int, reason: str) -> None: ...

    async def trigger_savepoint(self, target_directory: str | None, cancel_job: bool) -> str:
        """The savepoint's path once it completed (with ``cancel_job`` the job is then cancelling)."""

    async def stop_with_savepoint(self, target_directory: str | None, drain: bool) -> str: ...

    async def trigger_checkpoint(self) -> int: ...

    async def request_checkpoint_statistics(self) -> dict[str, Any]: ...

    async def deliver_coordination_request(self, operator_id: str, request: bytes) -> bytes:
        """Forward a client's request (opaque bytes) to the operator's running subtask 0; its
        answer, ``b""`` if it cannot answer now."""
