"""The JobGraph: the wire format a client submits (data, not code)."""

from flott.runtime.jobgraph.job_graph import (
    JOB_GRAPH_FORMAT_VERSION,
    JobEdge,
    JobGraph,
    JobVertex,
    OperatorDescriptor,
    PartitionerDescriptor,
    PartitionerKind,
    decode_job_graph,
    encode_job_graph,
    new_id,
)

__all__ = [
    "JOB_GRAPH_FORMAT_VERSION",
    "JobEdge",
    "JobGraph",
    "JobVertex",
    "OperatorDescriptor",
    "PartitionerDescriptor",
    "PartitionerKind",
    "decode_job_graph",
    "encode_job_graph",
    "new_id",
]
