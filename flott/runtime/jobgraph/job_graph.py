"""JobGraph wire types.

A JobGraph is plain data: vertices (chains of operators), edges with their
partitioner, parallelism, configuration, and user code as opaque cloudpickle
blobs referenced by id. The JobManager validates and schedules it without ever
unpickling a blob; only TaskExecutors load user code. Encoded as msgpack (the
submission file) or JSON (``flott info`` prints the plan).
"""

from __future__ import annotations

import collections
import hashlib
import uuid
from typing import Any, Literal

import msgspec

from flott.errors import InvalidJobGraphError

JOB_GRAPH_FORMAT_VERSION = 1

PartitionerKind = Literal[
    "forward", "hash", "rebalance", "rescale", "shuffle", "broadcast", "global", "custom"
]


def new_id() -> str:
    """A fresh 32-hex-digit id, the shape Flink uses for JobID and vertex ids."""
    return uuid.uuid4().hex


def blob_id(data: bytes) -> str:
    """Content address of a user-code blob."""
    return hashlib.sha256(data).hexdigest()


class PartitionerDescriptor(msgspec.Struct, frozen=True):
    """How records of an edge are distributed over the consumer's subtasks.

    ``key_selector`` is the blob id of the key selector for ``hash``, and of the Partitioner and
    key selector bundle (``CustomPartitionerSpec``) for ``custom``.
    """

    kind: PartitionerKind
    key_selector: str | None = None


class OperatorDescriptor(msgspec.Struct, frozen=True):
    """One operator of a chain.

    ``kind`` names the runtime operator (``source``, ``map``, ``flat_map``,
    ``filter``, ``process``, ``keyed_process``, ``reduce``, ``sum``, ``min``,
    ``max``, ``min_by``, ``max_by``, ``sink``, ``print`` ...). ``function`` is the
    blob id of the user object (function, Function instance, Source, Sink);
    ``key_selector`` the blob id of the key selector for keyed operators;
    ``input_type``/``output_type`` blob ids of pickled flott TypeInformation
    (declared types, used for serialisation and for printing as PyFlink does);
    ``config`` small operator-specific settings (plain JSON values).
    """

    operator_id: str
    name: str
    kind: str
    uid: str | None = None
    function: str | None = None
    key_selector: str | None = None
    input_type: str | None = None
    output_type: str | None = None
    config: dict[str, Any] = {}


class JobVertex(msgspec.Struct, frozen=True):
    """A task: a chain of operators run as one unit, ``parallelism`` times."""

    id: str
    name: str
    parallelism: int
    max_parallelism: int
    operators: list[OperatorDescriptor]
    slot_sharing_group: str = "default"
    """Subtask i of every vertex in one group shares the group's i-th slot (one process)."""
    parallelism_configured: bool = True
    """An operator of the chain had its parallelism set explicitly. In a BATCH job Flink's adaptive
    batch scheduler decides the parallelism of the vertices where this is False (see
    flott.runtime.scheduler.adaptivebatch); elsewhere ``parallelism`` is what runs."""
    max_parallelism_configured: bool = True
    """The max parallelism was set (operator or environment), not derived from the parallelism."""

    @property
    def is_source(self) -> bool:
        return bool(self.operators) and self.operators[0].kind == "source"


class JobEdge(msgspec.Struct, frozen=True):
    """A data exchange from ``source`` vertex to input ``target_input`` of ``target``.

    ``id`` names the intermediate data set the producer writes for this edge.
    """

    id: str
    source: str
    target: str
    partitioner: PartitionerDescriptor
    target_input: int = 0


class JobGraph(msgspec.Struct, frozen=True):
    job_id: str
    job_name: str
    vertices: list[JobVertex]
    edges: list[JobEdge]
    config: dict[str, str] = {}
    user_artifacts: dict[str, bytes] = {}
    savepoint_path: str | None = None
    allow_non_restored_state: bool = False
    format_version: int = JOB_GRAPH_FORMAT_VERSION

    def vertex(self, vertex_id: str) -> JobVertex:
        for v in self.vertices:
            if v.id == vertex_id:
                return v
        raise InvalidJobGraphError(f"JobGraph has no vertex {vertex_id}")

    def inputs_of(self, vertex_id: str) -> list[JobEdge]:
        return [e for e in self.edges if e.target == vertex_id]

    def outputs_of(self, vertex_id: str) -> list[JobEdge]:
        return [e for e in self.edges if e.source == vertex_id]

    def topological_order(self) -> list[JobVertex]:
        """Kahn's algorithm over adjacency lists: linear in vertices + edges (graphs come from clients)."""
        by_id = {v.id: v for v in self.vertices}
        indeg = dict.fromkeys(by_id, 0)
        outputs: dict[str, list[str]] = {vid: [] for vid in by_id}
        for e in self.edges:
            indeg[e.target] += 1
            outputs[e.source].append(e.target)
        ready = collections.deque(v.id for v in self.vertices if indeg[v.id] == 0)
        order: list[JobVertex] = []
        while ready:
            vid = ready.popleft()
            order.append(by_id[vid])
            for target in outputs[vid]:
                indeg[target] -= 1
                if indeg[target] == 0:
                    ready.append(target)
        if len(order) != len(self.vertices):
            raise InvalidJobGraphError("JobGraph has a cycle")
        return order

    def slot_sharing_groups(self) -> dict[str, int]:
        """Each slot-sharing group (in first-seen order) with the slots it needs: its largest parallelism."""
        groups: dict[str, int] = {}
        for v in self.vertices:
            groups[v.slot_sharing_group] = max(groups.get(v.slot_sharing_group, 0), v.parallelism)
        return groups

    def slots_needed(self) -> int:
        """Slots the job occupies: per slot-sharing group, its largest vertex parallelism."""
        return sum(self.slot_sharing_groups().values())

    def validate(self) -> None:
        """Check the graph is runnable; raise InvalidJobGraphError naming what is wrong."""
        if self.format_version != JOB_GRAPH_FORMAT_VERSION:
            raise InvalidJobGraphError(
                f"JobGraph format version {self.format_version} is not supported "
                f"(this cluster reads version {JOB_GRAPH_FORMAT_VERSION})"
            )
        if len(self.job_id) != 32 or any(c not in "0123456789abcdef" for c in self.job_id):
            raise InvalidJobGraphError(f"job id must be 32 lower-case hex digits, got {self.job_id!r}")
        if not self.vertices:
            raise InvalidJobGraphError("JobGraph has no vertices")
        ids = [v.id for v in self.vertices]
        if len(set(ids)) != len(ids):
            raise InvalidJobGraphError("JobGraph has duplicate vertex ids")
        known = set(ids)
        for v in self.vertices:
            if v.parallelism < 1:
                raise InvalidJobGraphError(
                    f"vertex '{v.name}' has parallelism {v.parallelism} (must be >= 1)"
                )
            if v.max_parallelism < v.parallelism:
                raise InvalidJobGraphError(
                    f"vertex '{v.name}': max parallelism {v.max_parallelism} < parallelism {v.parallelism}"
                )
            if not v.operators:
                raise InvalidJobGraphError(f"vertex '{v.name}' has no operators")
            for op in v.operators:
                for ref in (op.function, op.key_selector, op.input_type, op.output_type):
                    if ref is not None and ref not in self.user_artifacts:
                        raise InvalidJobGraphError(
                            f"operator '{op.name}' references missing artifact {ref[:12]}"
                        )
        by_id = {v.id: v for v in self.vertices}
        for e in self.edges:
            if e.source not in known or e.target not in known:
                raise InvalidJobGraphError(f"edge {e.id} connects unknown vertices")
            source, target = by_id[e.source], by_id[e.target]
            if e.partitioner.kind == "forward" and source.parallelism != target.parallelism:
                raise InvalidJobGraphError(
                    f"forward edge from '{source.name}' to '{target.name}' needs equal parallelism"
                )
            keyed_kind = e.partitioner.kind in ("hash", "custom")
            if keyed_kind and e.partitioner.key_selector not in self.user_artifacts:
                raise InvalidJobGraphError(f"{e.partitioner.kind} edge {e.id} has no key selector artifact")
        targets = {e.target for e in self.edges}
        for v in self.vertices:
            if not v.is_source and v.id not in targets:
                raise InvalidJobGraphError(f"vertex '{v.name}' is not a source and has no input")
        self.topological_order()


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(JobGraph)


def encode_job_graph(graph: JobGraph) -> bytes:
    return _encoder.encode(graph)


def decode_job_graph(data: bytes) -> JobGraph:
    """Decode and validate; anything else than a flott JobGraph is an InvalidJobGraphError."""
    try:
        graph = _decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise InvalidJobGraphError(f"not a flott JobGraph (msgpack): {e}") from None
    except RecursionError:  # msgspec's nesting limit, reachable through an operator's config
        raise InvalidJobGraphError("not a flott JobGraph (msgpack): nested too deeply") from None
    graph.validate()
    return graph
