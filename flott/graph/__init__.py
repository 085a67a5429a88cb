"""From a recorded DataStream program to a JobGraph: the StreamGraph and its translation.

``build_job_graph(env, job_name)`` is what ``flott info`` and the tests use: it
translates without submitting and without clearing the environment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flott.graph.job_graph_generator import MissingUidWarning, create_job_graph, operator_ids
from flott.graph.stream_graph import StreamEdge, StreamGraph, StreamNode, default_max_parallelism
from flott.graph.stream_graph_generator import generate_stream_graph

if TYPE_CHECKING:
    from flott.datastream.stream_execution_environment import StreamExecutionEnvironment
    from flott.runtime.jobgraph import JobGraph

__all__ = [
    "MissingUidWarning",
    "StreamEdge",
    "StreamGraph",
    "StreamNode",
    "build_job_graph",
    "create_job_graph",
    "default_max_parallelism",
    "generate_stream_graph",
    "operator_ids",
]


def build_job_graph(env: StreamExecutionEnvironment, job_name: str | None = None) -> JobGraph:
    """The JobGraph ``env.execute(job_name)`` would submit; ``env`` keeps its transformations."""
    return env.get_job_graph(job_name)
