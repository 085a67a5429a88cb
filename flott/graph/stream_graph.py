"""The StreamGraph: one node per operator, one edge per data exchange (Flink's StreamGraph).

Built from the recorded transformations by ``stream_graph_generator``; virtual
transformations (partitioning, union, watermark assignment) are gone here:
partitioning is a property of the edges, a union is a node with several input
edges. Everything is resolved: parallelism, max parallelism, slot sharing
group, each edge's partitioner and the runtime mode, so the JobGraph
generator only decides chaining and ids. User objects are still live Python
objects here; they are pickled only when the JobGraph is created.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from flott.api.streaming.transformations import ChainingStrategy

DEFAULT_SLOT_SHARING_GROUP = "default"
DEFAULT_MAX_PARALLELISM = 128
UPPER_BOUND_MAX_PARALLELISM = 32768


def default_max_parallelism(parallelism: int) -> int:
    """Flink's default max parallelism of an operator: 1.5 x parallelism rounded up to a power
    of two, at least 128 and at most 32768 (so 128 for any parallelism up to 85)."""
    wanted = parallelism + parallelism // 2
    power = 1
    while power < wanted:
        power <<= 1
    return min(max(power, DEFAULT_MAX_PARALLELISM), UPPER_BOUND_MAX_PARALLELISM)


@dataclass(eq=False)
class StreamEdge:
    """A data exchange between two nodes; ``partitioner`` is already resolved
    (an unset partitioner became ``forward`` or ``rebalance``)."""

    source_id: int
    target_id: int
    partitioner: str
    key_selector: Any = None
    type_number: int = 0
    """Input index of the target (0 for one-input operators, 0 or 1 for two-input ones)."""
    output_tag: Any = None
    """The OutputTag whose side output this edge carries (None: the source node's main output)."""
    partitioner_defaulted: bool = False
    """The program chose no partitioner: ``forward`` (equal parallelism) or ``rebalance`` was picked."""

    def __repr__(self) -> str:
        return f"StreamEdge({self.source_id} -[{self.partitioner}]-> {self.target_id})"


@dataclass(eq=False)
class StreamNode:
    """One operator, with everything the JobGraph generator needs."""

    id: int
    name: str
    """Operator name as shown in the job's vertex names: ``Map``, ``Source: x``, ``Sink: y``."""
    kind: str
    parallelism: int
    max_parallelism: int
    slot_sharing_group: str
    parallelism_configured: bool = True
    """False: the environment's parallelism, which Flink's adaptive batch scheduler may change."""
    max_parallelism_configured: bool = True
    chaining_strategy: ChainingStrategy = ChainingStrategy.ALWAYS
    function: Any = None
    """The user object: function, Function instance, Source or Sink."""
    key_selector: Any = None
    input_type: Any = None
    output_type: Any = None
    config: dict[str, Any] = field(default_factory=dict)
    uid: str | None = None
    uid_hash: str | None = None
    description: str | None = None
    buffer_timeout: int | None = None
    boundedness: str | None = None
    """Sources only: ``BOUNDED`` or ``CONTINUOUS_UNBOUNDED``."""
    watermark_strategy: Any = None
    """Sources: the WatermarkStrategy of ``from_source`` (timestamps and watermarks start there)."""
    timestamped_inputs: list[bool] = field(default_factory=lambda: [False, False])
    """Per input index: the records arriving there are ``(value, timestamp)`` pairs."""
    timestamped_output: bool = False
    """The records this node emits are ``(value, timestamp)`` pairs (see ``timestamp_paths``)."""
    transformation_id: int = 0
    in_edges: list[StreamEdge] = field(default_factory=list)
    out_edges: list[StreamEdge] = field(default_factory=list)

    @property
    def is_source(self) -> bool:
        return self.kind == "source"

    @property
    def is_sink(self) -> bool:
        return self.kind == "sink"

    def __repr__(self) -> str:
        return f"StreamNode({self.id}, {self.name!r}, {self.kind}, p={self.parallelism})"


class StreamGraph:
    """Nodes and edges of a job plus the job-level settings."""

    def __init__(
        self,
        job_name: str,
        config: dict[str, str],
        runtime_mode: str,
        buffer_timeout: int,
        chaining_enabled: bool = True,
        chain_different_max_parallelism: bool = True,
        auto_generated_uids: bool = True,
    ) -> None:
        self.job_name = job_name
        self.config = config
        """The job's configuration (Flink keys); copied into ``JobGraph.config``."""
        self.runtime_mode = runtime_mode
        """``STREAMING`` or ``BATCH`` (AUTOMATIC already resolved)."""
        self.buffer_timeout = buffer_timeout
        self.chaining_enabled = chaining_enabled
        self.chain_different_max_parallelism = chain_different_max_parallelism
        self.auto_generated_uids = auto_generated_uids
        self.nodes: dict[int, StreamNode] = {}
        self.edges: list[StreamEdge] = []
        self.cache_writes: list[Any] = []
        """``PendingCache`` of every cached stream this job writes (``cache()`` in BATCH mode)."""

    # --- building -------------------------------------------------------------------------------

    def add_node(self, node: StreamNode) -> StreamNode:
        if node.id in self.nodes:
            raise ValueError(f"duplicate stream node id {node.id}")
        self.nodes[node.id] = node
        return node

    def add_edge(self, edge: StreamEdge) -> StreamEdge:
        self.nodes[edge.source_id].out_edges.append(edge)
        self.nodes[edge.target_id].in_edges.append(edge)
        self.edges.append(edge)
        return edge

    # --- queries --------------------------------------------------------------------------------

    def node(self, node_id: int) -> StreamNode:
        return self.nodes[node_id]

    @property
    def sources(self) -> list[StreamNode]:
        return [n for n in self.nodes.values() if n.is_source]

    @property
    def sinks(self) -> list[StreamNode]:
        return [n for n in self.nodes.values() if n.is_sink]

    def topological_order(self) -> list[StreamNode]:
        """Nodes in dependency order; ties broken by node id, so the order is deterministic."""
        indegree = {nid: len(n.in_edges) for nid, n in self.nodes.items()}
        ready = sorted(nid for nid, d in indegree.items() if d == 0)
        order: list[StreamNode] = []
        while ready:
            nid = ready.pop(0)
            order.append(self.nodes[nid])
            released = []
            for e in self.nodes[nid].out_edges:
                indegree[e.target_id] -= 1
                if indegree[e.target_id] == 0:
                    released.append(e.target_id)
            ready = sorted(ready + released)
        if len(order) != len(self.nodes):
            raise ValueError("the stream graph has a cycle")
        return order

    # --- Flink's execution plan JSON ------------------------------------------------------------

    def to_execution_plan(self) -> dict[str, Any]:
        """The plan as Flink's JSONGenerator shapes it (``nodes`` with ``predecessors``)."""
        nodes = []
        for node in self.topological_order():
            pact = "Data Source" if node.is_source else "Data Sink" if node.is_sink else "Operator"
            entry: dict[str, Any] = {
                "id": node.id,
                "type": node.name,
                "pact": pact,
                "contents": node.description or node.name,
                "parallelism": node.parallelism,
            }
            if node.in_edges:
                entry["predecessors"] = [
                    {"id": e.source_id, "ship_strategy": e.partitioner.upper(), "side": "second"}
                    for e in node.in_edges
                ]
            nodes.append(entry)
        return {"nodes": nodes}

    def to_execution_plan_json(self) -> str:
        return json.dumps(self.to_execution_plan(), indent=2)

    def __repr__(self) -> str:
        return f"StreamGraph({self.job_name!r}, {len(self.nodes)} nodes, {len(self.edges)} edges)"
