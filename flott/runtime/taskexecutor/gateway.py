"""The TaskExecutor's RPC surface."""

from __future__ import annotations

from typing import Protocol

from flott.runtime.messages.execution import TaskDeploymentDescriptor

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

    async def disconnect_job_manager(self, job_id: str, cause: str) -> None: ...

    async def shutdown(self, *, timeout: float | None = None) -> None: ...
