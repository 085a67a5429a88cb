"""The JobMaster's side of collecting (Flink's CollectSinkOperatorCoordinator), reduced to routing.

Flink's coordinator keeps a socket to the sink; flott's JobMaster already
holds an RPC gateway to every TaskExecutor, so the coordinator forwards each
client request, as the opaque bytes it is, to the TaskExecutor running the
sink's current attempt and hands back that TaskExecutor's bytes. It never
decodes either: user data never reaches the JobManager as objects.

``b""`` means "no answer now" (the sink is not running yet, is restarting,
or its TaskExecutor did not answer in time); the client then checks the job
and asks again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

from flott.errors import FlottError, OperatorNotFoundError
from flott.runtime.jobgraph import JobGraph
from flott.runtime.messages.execution import ExecutionState

if TYPE_CHECKING:  # the JobMaster calls this module; only the type is named here
    from flott.runtime.jobmaster.execution_graph import Execution

log = logging.getLogger(__name__)

COORDINATION_TIMEOUT_S = 10.0


class CoordinationTarget(Protocol):
    async def deliver_coordination_request(
        self, execution_id: str, operator_id: str, request: bytes, *, timeout: float | None = None
    ) -> bytes: ...


def vertex_of_operator(job_graph: JobGraph, operator_id: str) -> str:
    for vertex in job_graph.vertices:
        if any(op.operator_id == operator_id for op in vertex.operators):
            return vertex.id
    raise OperatorNotFoundError(f"Job {job_graph.job_id} has no operator with id {operator_id}.")


async def forward_coordination_request(
    job_graph: JobGraph,
    executions: Iterable[Execution],
    gateway_of: Callable[[str], CoordinationTarget | None],
    operator_id: str,
    request: bytes,
) -> bytes:
    """Send ``request`` to the running attempt of subtask 0 of the operator's vertex."""
    vertex_id = vertex_of_operator(job_graph, operator_id)
    for ex in executions:
        if ex.vertex_id != vertex_id or ex.subtask_index != 0:
            continue
        if ex.state is not ExecutionState.RUNNING or ex.resource_id is None:
            return b""
        gateway = gateway_of(ex.resource_id)
        if gateway is None:
            return b""
        try:
            return await gateway.deliver_coordination_request(
                ex.execution_id, operator_id, request, timeout=COORDINATION_TIMEOUT_S
            )
        except FlottError as e:
            log.debug("coordination request to %s of %s failed: %s", operator_id, ex.execution_id, e)
            return b""
    return b""
