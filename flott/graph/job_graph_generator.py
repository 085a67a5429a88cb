"""StreamGraph → JobGraph (Flink's StreamingJobGraphGenerator).

Three decisions happen here:

* **Operator ids.** Stable across runs of the same program: the md5 of the
  user's ``uid`` when given (the way to keep savepoint state mapped when the
  program changes), the user's ``set_uid_hash`` verbatim, else a hash of the
  operator's position in the graph and its inputs' ids. A vertex's id is its
  head operator's id, as in Flink.
* **Chaining.** A→B become one task when the edge is ``forward`` and carries
  A's main output (not a side output), A has one output and B one input,
  neither disabled chaining (B did not start a new chain), chaining is enabled
  and both are in the same slot sharing group. Chains are linear, so a vertex
  is a list of operators; side outputs therefore always leave a task.
* **User code as data.** Functions, key selectors, Source/Sink objects and
  declared TypeInformation are cloudpickled into ``user_artifacts`` keyed by
  content hash (identical blobs are stored once). Nothing is unpickled here.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import sys
import types
import warnings
from typing import Any

from flott.api.streaming.transformations import ChainingStrategy
from flott.errors import InvalidJobGraphError
from flott.graph.local_aggregation import add_local_pre_aggregation
from flott.graph.python_operator_fusion import pyflink_fuses
from flott.graph.stream_graph import StreamEdge, StreamGraph, StreamNode
from flott.graph.unsupported_settings import refuse_unsupported_settings
from flott.graph.user_code import dumps_user_object
from flott.runtime.jobgraph import (
    JobEdge,
    JobGraph,
    JobVertex,
    OperatorDescriptor,
    PartitionerDescriptor,
    new_id,
)
from flott.runtime.jobgraph.job_graph import blob_id
from flott.runtime.operators.specs import SourceWithWatermarks
from flott.runtime.operators.stream_operator import (
    SIDE_OUTPUT_TAGS,
    TIMESTAMPED_INPUT,
    TIMESTAMPED_INPUT2,
    TIMESTAMPED_OUTPUT,
)
from flott.runtime.scheduler.adaptivebatch.vertex_parallelism_decider import AdaptiveBatchSettings
from flott.runtime.tasks.record_writer import CHECK_INPUT, OUTPUT_TAGS, UNCHECKED_OUTPUT

__all__ = ["MissingUidWarning", "create_job_graph", "operator_ids"]

FIXED_JOB_ID = "$internal.pipeline.job-id"
SAVEPOINT_PATH = "execution.savepoint.path"
SAVEPOINT_IGNORE_UNCLAIMED = "execution.savepoint.ignore-unclaimed-state"

STATEFUL_KINDS = frozenset(
    {"reduce", "sum", "min", "max", "min_by", "max_by", "keyed_process", "window", "keyed_co_process"}
    | {"broadcast_process", "keyed_broadcast_process", "async_wait"}
)
"""Operator kinds that always keep state (keyed state; broadcast state for the broadcast kinds; the
records in flight of async I/O)."""

TWO_INPUT_KINDS = frozenset(
    {
        "co_map",
        "co_flat_map",
        "co_process",
        "keyed_co_process",
        "broadcast_process",
        "keyed_broadcast_process",
    }
)

_HEX32 = re.compile(r"^[0-9a-f]{32}$")


class MissingUidWarning(UserWarning):
    """A stateful job has operators without ``uid``: savepoints may not map after changes."""


# --------------------------------------------------------------------------- ids


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()


def operator_ids(graph: StreamGraph) -> dict[int, str]:
    """Stable 32-hex-digit operator id of every node (uid hash > md5(uid) > position hash)."""
    ids: dict[int, str] = {}
    owners: dict[str, StreamNode] = {}
    for node in graph.topological_order():
        if node.uid_hash is not None:
            op_id = node.uid_hash
        elif node.uid is not None:
            op_id = _md5(node.uid)
        else:
            if not graph.auto_generated_uids:
                raise InvalidJobGraphError(
                    "Auto generated UIDs have been disabled but no UID or hash has been assigned "
                    f"to operator {node.name}"
                )
            inputs = ",".join(ids[e.source_id] for e in node.in_edges)
            op_id = _md5(f"flott-operator|{node.id}|{node.kind}|{inputs}")
        clash = owners.get(op_id)
        if clash is not None:
            if node.uid is not None and node.uid == clash.uid:
                raise InvalidJobGraphError(
                    f'Hash collision on user-specified ID "{node.uid}". Most likely cause is a non-unique '
                    "ID. Please check that all IDs specified via `uid(String)` are unique."
                )
            raise InvalidJobGraphError(
                f"Operators '{clash.name}' and '{node.name}' have the same id {op_id}: "
                "check the uids and uid hashes set on them"
            )
        owners[op_id] = node
        ids[node.id] = op_id
    return ids


def holds_state(node: StreamNode) -> bool:
    """Whether the node keeps state a savepoint must map back to it (what needs a ``uid``).

    Keyed aggregations, windows and keyed process functions always do; another operator on a
    keyed stream may (a Function can open keyed state), a plain lambda cannot. Sources keep
    read positions worth restoring only when unbounded; sinks keep state only when they commit
    in two phases (pending files). Stateless maps, bounded collection sources and print sinks
    hold nothing."""
    if node.kind in STATEFUL_KINDS or "broadcast" in node.kind:
        return True
    if node.is_source:
        return node.boundedness == "CONTINUOUS_UNBOUNDED" and callable(
            getattr(node.function, "restore_reader", None)
        )
    if node.is_sink:
        return callable(getattr(node.function, "commit", None))
    if node.key_selector is not None:
        return not isinstance(node.function, (types.FunctionType, types.BuiltinFunctionType))
    return False


def _warn_missing_uids(graph: StreamGraph) -> None:
    """Warn once per job about operators that hold state but would get positional ids."""
    missing = [
        n.name for n in graph.topological_order() if n.uid is None and n.uid_hash is None and holds_state(n)
    ]
    if missing:
        warnings.warn(
            f"Job '{graph.job_name}' keeps state, but these operators have no uid: {', '.join(missing)}. "
            "Their ids are derived from their position in the job, so their state in a savepoint may "
            "not map back to them after the program changes. Set .uid(...) on stateful operators "
            "for savepoint compatibility.",
            MissingUidWarning,
            stacklevel=_user_stacklevel(),
        )


def _user_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the first caller outside the flott package."""
    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    level = 1
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package_dir + os.sep):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


# --------------------------------------------------------------------------- chaining


def is_chainable(edge: StreamEdge, graph: StreamGraph) -> bool:
    """Whether ``edge``'s target runs in the same task as its source (Flink's rules, linear chains)."""
    up = graph.node(edge.source_id)
    down = graph.node(edge.target_id)
    return (
        graph.chaining_enabled
        and edge.partitioner == "forward"
        and edge.output_tag is None
        and up.parallelism == down.parallelism
        and len(up.out_edges) == 1
        and len(down.in_edges) == 1
        and up.chaining_strategy != ChainingStrategy.NEVER
        and down.chaining_strategy == ChainingStrategy.ALWAYS
        and up.slot_sharing_group == down.slot_sharing_group
        and (graph.chain_different_max_parallelism or up.max_parallelism == down.max_parallelism)
    )


def chains(graph: StreamGraph) -> list[list[StreamNode]]:
    """The operator chains (one per vertex), in topological order of their heads."""
    chain_of: dict[int, list[StreamNode]] = {}
    result: list[list[StreamNode]] = []
    for node in graph.topological_order():
        if len(node.in_edges) == 1 and is_chainable(node.in_edges[0], graph):
            chain = chain_of[node.in_edges[0].source_id]
            chain.append(node)
        else:
            chain = [node]
            result.append(chain)
        chain_of[node.id] = chain
    return result


def _adaptive_rescale(edge: StreamEdge, graph: StreamGraph) -> bool:
    """A BATCH job under the adaptive batch scheduler: a forward edge the program did not ask for
    that Flink would not chain either becomes a rescale edge (Flink's ForwardForUnspecified
    partitioner), so its consumer's parallelism is decided on its own. Flink chains an operator
    with several outputs, flott's linear chains do not: such edges stay forward (same parallelism)."""
    if edge.partitioner != "forward" or not edge.partitioner_defaulted:
        return False
    if str(graph.config.get("execution.runtime-mode", "")).strip().upper() != "BATCH":
        return False
    if not AdaptiveBatchSettings.from_config(graph.config).enabled:
        return False
    up, down = graph.node(edge.source_id), graph.node(edge.target_id)
    flink_chains = (
        graph.chaining_enabled
        and len(down.in_edges) == 1
        and up.chaining_strategy != ChainingStrategy.NEVER
        and down.chaining_strategy == ChainingStrategy.ALWAYS
        and up.slot_sharing_group == down.slot_sharing_group
        and (graph.chain_different_max_parallelism or up.max_parallelism == down.max_parallelism)
    )
    return not flink_chains


# --------------------------------------------------------------------------- artifacts


class _Artifacts:
    """Content-addressed store of pickled user objects."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}
        self._by_object: dict[int, tuple[Any, str]] = {}

    def add(self, obj: Any, what: str) -> str | None:
        if obj is None:
            return None
        cached = self._by_object.get(id(obj))
        if cached is not None and cached[0] is obj:
            return cached[1]
        try:
            data = dumps_user_object(obj)
        except Exception as e:
            raise InvalidJobGraphError(
                f"{what} cannot be pickled ({type(e).__name__}: {e}). User functions and the objects "
                "they reference are shipped to the TaskExecutors; keep sockets, locks, open files and "
                "clients out of them (create those in open())."
            ) from e
        ref = blob_id(data)
        self.blobs.setdefault(ref, data)
        self._by_object[id(obj)] = (obj, ref)
        return ref


def _runtime_function(node: StreamNode) -> Any:
    """The user object of the node as the runtime loads it (a source keeps its WatermarkStrategy)."""
    strategy = node.watermark_strategy
    if node.is_source and strategy is not None:
        generates = bool(getattr(strategy, "generates_watermarks", lambda: False)())
        if generates or getattr(strategy, "timestamp_assigner", None) is not None:
            return SourceWithWatermarks(node.function, strategy)
    return node.function


def _time_config(node: StreamNode) -> dict[str, Any]:
    """Descriptor config entries saying which records are ``(value, timestamp)`` pairs."""
    config: dict[str, Any] = {}
    if node.timestamped_inputs[0] and not node.is_source:
        config[TIMESTAMPED_INPUT] = True
    if node.timestamped_inputs[1] and node.kind in TWO_INPUT_KINDS:
        config[TIMESTAMPED_INPUT2] = True
    if node.timestamped_output and not node.is_sink:
        config[TIMESTAMPED_OUTPUT] = True
    return config


def _operator(
    node: StreamNode, op_id: str, artifacts: _Artifacts, extra_config: dict[str, Any]
) -> OperatorDescriptor:
    what = {"source": "the Source of", "sink": "the Sink of"}.get(node.kind, "the function of")
    return OperatorDescriptor(
        operator_id=op_id,
        name=node.name,
        kind=node.kind,
        uid=node.uid,
        function=artifacts.add(_runtime_function(node), f"{what} operator '{node.name}'"),
        key_selector=artifacts.add(node.key_selector, f"the key selector of operator '{node.name}'"),
        input_type=artifacts.add(node.input_type, f"the input type of operator '{node.name}'"),
        output_type=artifacts.add(node.output_type, f"the output type of operator '{node.name}'"),
        config={**node.config, **_time_config(node), **extra_config.get(op_id, {})},
    )


# --------------------------------------------------------------------------- declared output types


def _mark_declared_type_checks(
    graph: StreamGraph,
    all_chains: list[list[StreamNode]],
    ids: dict[int, str],
    artifacts: _Artifacts,
    extra_config: dict[str, dict[str, Any]],
) -> None:
    """Where PyFlink's boundaries of fused Python operators and flott's task boundaries differ,
    say so in the operators' config: a task's last operator whose consumer PyFlink fuses into it
    is not checked where it leaves the task (:data:`UNCHECKED_OUTPUT`); a chained operator that
    PyFlink feeds through its producer's coder checks its input (:data:`CHECK_INPUT`). Chained
    sinks check their input themselves."""
    for chain in all_chains:
        for up, down in itertools.pairwise(chain):
            if up.is_source or up.output_type is None or down.is_sink:
                continue
            if not pyflink_fuses(down.in_edges[0], graph):
                type_ref = artifacts.add(up.output_type, f"the output type of operator '{up.name}'")
                spec = {"type": type_ref, "producer": up.name, "keyed": False}
                extra_config.setdefault(ids[down.id], {})[CHECK_INPUT] = spec
        last = chain[-1]
        if len(last.out_edges) == 1 and pyflink_fuses(last.out_edges[0], graph):
            extra_config.setdefault(ids[last.id], {})[UNCHECKED_OUTPUT] = True


# --------------------------------------------------------------------------- the JobGraph


def _job_id(config: dict[str, str]) -> str:
    fixed = config.get(FIXED_JOB_ID, "").strip().lower()
    return fixed if _HEX32.match(fixed) else new_id()


def create_job_graph(graph: StreamGraph) -> JobGraph:
    """The validated JobGraph of ``graph``."""
    ids = operator_ids(graph)
    refuse_unsupported_settings(graph.config)
    _warn_missing_uids(graph)
    artifacts = _Artifacts()
    vertex_of: dict[int, str] = {}
    all_chains = chains(graph)
    for chain in all_chains:
        for node in chain:
            vertex_of[node.id] = ids[chain[0].id]
    edges: list[JobEdge] = []
    per_pair: dict[tuple[str, str], int] = {}
    extra_config: dict[str, dict[str, Any]] = {}
    """Per operator id: config entries only known once the edges exist (side outputs)."""
    for node in graph.topological_order():
        for e in node.in_edges:
            source, target = vertex_of[e.source_id], vertex_of[e.target_id]
            if source == target:
                continue
            n = per_pair.get((source, target), 0)
            per_pair[(source, target)] = n + 1
            key_selector = None
            if e.partitioner == "hash":
                key_selector = artifacts.add(
                    e.key_selector, f"the key selector of key_by before '{node.name}'"
                )
            elif e.partitioner == "custom":
                key_selector = artifacts.add(
                    e.key_selector, f"the Partitioner of partition_custom before '{node.name}'"
                )
            edge_id = _md5(f"flott-edge|{source}|{target}|{n}")
            if e.output_tag is not None:
                # The producer is the last operator of its vertex (side-output edges never chain).
                producer = extra_config.setdefault(ids[e.source_id], {})
                producer.setdefault(OUTPUT_TAGS, {})[edge_id] = e.output_tag.tag_id
                tags = producer.setdefault(SIDE_OUTPUT_TAGS, [])
                if e.output_tag.tag_id not in tags:
                    tags.append(e.output_tag.tag_id)
            kind = "rescale" if _adaptive_rescale(e, graph) else e.partitioner
            edges.append(
                JobEdge(
                    id=edge_id,
                    source=source,
                    target=target,
                    partitioner=PartitionerDescriptor(kind=kind, key_selector=key_selector),  # type: ignore[arg-type]
                    target_input=e.type_number,
                )
            )
    _mark_declared_type_checks(graph, all_chains, ids, artifacts, extra_config)
    vertices: list[JobVertex] = []
    for chain in all_chains:
        head = chain[0]
        vertices.append(
            JobVertex(
                id=ids[head.id],
                name=" -> ".join(n.name for n in chain),
                parallelism=head.parallelism,
                max_parallelism=head.max_parallelism,
                operators=[_operator(n, ids[n.id], artifacts, extra_config) for n in chain],
                slot_sharing_group=head.slot_sharing_group,
                parallelism_configured=any(n.parallelism_configured for n in chain),
                max_parallelism_configured=head.max_parallelism_configured,
            )
        )
    config = dict(graph.config)
    vertices = add_local_pre_aggregation(vertices, edges, config.get("execution.runtime-mode", "STREAMING"))
    job_graph = JobGraph(
        job_id=_job_id(config),
        job_name=graph.job_name,
        vertices=vertices,
        edges=edges,
        config=config,
        user_artifacts=artifacts.blobs,
        savepoint_path=config.get(SAVEPOINT_PATH) or None,
        allow_non_restored_state=config.get(SAVEPOINT_IGNORE_UNCLAIMED, "false").strip().lower() == "true",
    )
    job_graph.validate()
    return job_graph
