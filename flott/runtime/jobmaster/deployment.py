"""Builds TaskDeploymentDescriptors: where each subtask reads from and writes to.

Pure functions of the ExecutionGraph and the data addresses of the
TaskExecutors holding the job's slots. A forward edge is pointwise (subtask i
reads producer i's single subpartition); every other partitioner is
all-to-all (consumer j reads subpartition j of every producer). In a BATCH job run by the
adaptive batch scheduler every output is a blocking partition, and a consumer whose parallelism
was decided at run time reads a range of each producer's subpartitions (see
:class:`~flott.runtime.scheduler.adaptivebatch.adaptive_batch_plan.AdaptiveBatchPlan`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from flott.runtime.jobgraph import JobEdge, JobGraph
from flott.runtime.jobmaster.execution_graph import Execution, ExecutionGraph
from flott.runtime.jobmaster.execution_graph import partition_id as execution_partition_id
from flott.runtime.messages.execution import (
    InputChannelDescriptor,
    InputGateDeploymentDescriptor,
    PythonArtifactDescriptor,
    ResultPartitionDeploymentDescriptor,
    TaskDeploymentDescriptor,
    TaskRestore,
)

if TYPE_CHECKING:
    from flott.runtime.scheduler.adaptivebatch.adaptive_batch_plan import AdaptiveBatchPlan


def partition_id(job_id: str, edge: JobEdge, producer: Execution) -> str:
    """Flink's ResultPartitionID: (intermediate data set, producer subtask) + the producer attempt."""
    return execution_partition_id(job_id, edge.id, producer)


def num_subpartitions(graph: JobGraph, edge: JobEdge, plan: AdaptiveBatchPlan | None = None) -> int:
    if plan is not None:
        return plan.num_subpartitions(edge)
    return 1 if edge.partitioner.kind == "forward" else graph.vertex(edge.target).parallelism


def build_deployment(
    eg: ExecutionGraph,
    ex: Execution,
    data_addresses: dict[str, str],
    python_artifacts: Sequence[PythonArtifactDescriptor] = (),
    blob_server_address: str = "",
    *,
    job_config: Mapping[str, str] | None = None,
    restore: TaskRestore | None = None,
) -> TaskDeploymentDescriptor:
    """The descriptor of one attempt; every task of the job names all of the job's Python files.

    Python files are not per vertex (any user function may import any of
    them), so they are the job's whole list, by BlobServer key: the bytes are
    fetched by each TaskExecutor once, not sent with every deployment.
    """
    graph = eg.job_graph
    plan = eg.plan
    vertex = graph.vertex(ex.vertex_id)
    outputs = [
        ResultPartitionDeploymentDescriptor(
            e.id,
            partition_id(graph.job_id, e, ex),
            num_subpartitions(graph, e, plan),
            blocking=plan is not None,
        )
        for e in graph.outputs_of(vertex.id)
    ]
    groups: dict[int, list[JobEdge]] = {}
    for e in graph.inputs_of(vertex.id):
        groups.setdefault(e.target_input, []).append(e)
    gates = []
    for input_index in sorted(groups):
        channels = []
        for e in groups[input_index]:
            producers = eg.by_vertex[e.source]
            if e.partitioner.kind == "forward":
                p = producers[ex.subtask_index]
                assert p.resource_id is not None
                channels.append(
                    InputChannelDescriptor(data_addresses[p.resource_id], partition_id(graph.job_id, e, p), 0)
                )
            else:
                subpartitions = (
                    plan.input_subpartitions(e, ex.subtask_index)
                    if plan is not None
                    else range(ex.subtask_index, ex.subtask_index + 1)
                )
                for p in producers:
                    assert p.resource_id is not None
                    channels.extend(
                        InputChannelDescriptor(
                            data_addresses[p.resource_id], partition_id(graph.job_id, e, p), index
                        )
                        for index in subpartitions
                    )
        gates.append(
            InputGateDeploymentDescriptor(input_index, [e.id for e in groups[input_index]], channels)
        )
    refs = {
        r
        for op in vertex.operators
        for r in (op.function, op.key_selector, op.input_type, op.output_type)
        if r
    }
    for e in graph.outputs_of(vertex.id):
        if e.partitioner.key_selector:
            refs.add(e.partitioner.key_selector)
    assert ex.allocation_id is not None
    return TaskDeploymentDescriptor(
        job_id=graph.job_id,
        job_name=graph.job_name,
        execution_id=ex.execution_id,
        allocation_id=ex.allocation_id,
        vertex=vertex,
        subtask_index=ex.subtask_index,
        attempt_number=ex.attempt_number,
        job_config=dict(job_config) if job_config is not None else graph.config,
        input_gates=gates,
        output_partitions=outputs,
        artifacts={r: graph.user_artifacts[r] for r in refs},
        edges=graph.inputs_of(vertex.id) + graph.outputs_of(vertex.id),
        consumer_max_parallelism={
            e.id: graph.vertex(e.target).max_parallelism for e in graph.outputs_of(vertex.id)
        },
        python_artifacts=list(python_artifacts),
        blob_server_address=blob_server_address if python_artifacts else "",
        restore=restore,
    )
