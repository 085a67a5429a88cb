"""Transformations → StreamGraph (Flink's StreamGraphGenerator).

Walks the operator transformations the environment recorded, in creation
order, translating each one's inputs first. Node ids are assigned in that
order, so the same program always yields the same graph (position-derived
operator ids depend on it). Virtual transformations resolve into the edges
of their consumers: the partitioning nearest to the consumer wins (as in
Flink), a union contributes the edges of all its inputs, a side output makes
its edges carry that OutputTag of the producing operator.

Once all nodes exist, :func:`assign_timestamp_paths` decides which records
carry event timestamps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flott.api.common.slot_sharing_group import SlotSharingGroup
from flott.api.streaming.transformations import (
    OneInputTransformation,
    PartitionTransformation,
    SideOutputTransformation,
    SinkTransformation,
    SourceTransformation,
    TimestampsAndWatermarksTransformation,
    Transformation,
    TwoInputTransformation,
    UnionTransformation,
)
from flott.errors import InvalidJobGraphError, NotYetSupportedError
from flott.graph.cached_data_stream import (
    CacheRead,
    CacheTransformation,
    CacheWrite,
    PendingCache,
    new_cache_dir,
)
from flott.graph.stream_graph import (
    DEFAULT_SLOT_SHARING_GROUP,
    StreamEdge,
    StreamGraph,
    StreamNode,
    default_max_parallelism,
)
from flott.graph.timestamp_paths import assign_timestamp_paths
from flott.runtime.operators.specs import KeySelectorPair

if TYPE_CHECKING:
    from flott.datastream.stream_execution_environment import StreamExecutionEnvironment

__all__ = ["generate_stream_graph"]

RUNTIME_MODE = "execution.runtime-mode"
BUFFER_TIMEOUT = "execution.buffer-timeout"
PIPELINE_NAME = "pipeline.name"
KEYED_PARTITIONERS = ("hash", "custom")
"""Edges whose routing needs user code (a key selector; for ``custom`` with the Partitioner)."""


@dataclass(frozen=True)
class _Endpoint:
    """Where a consumer's input edge starts, and how it is partitioned (None: not set)."""

    node_id: int
    partitioner: str | None = None
    key_selector: Any = None
    output_tag: Any = None
    """Set when the edge carries a side output of the node, not its main output."""


def _boundedness_of(source: Any) -> str:
    """``BOUNDED`` or ``CONTINUOUS_UNBOUNDED`` of a Source object (enum or string)."""
    get = getattr(source, "get_boundedness", None)
    if not callable(get):
        return "CONTINUOUS_UNBOUNDED"
    value = get()
    name = getattr(value, "name", value)
    return str(name).upper()


def _tag_type(tag: Any) -> Any:
    """The declared type of a side output (its OutputTag's ``type_info``)."""
    return getattr(tag, "type_info", None)


def _group_name(group: Any) -> str | None:
    if isinstance(group, SlotSharingGroup):
        return group.get_name()
    return group


class _Generator:
    def __init__(
        self, env: StreamExecutionEnvironment, graph: StreamGraph, max_parallelism: int, batch: bool = False
    ) -> None:
        self._env = env
        self._graph = graph
        self._batch = batch
        """BATCH execution: cached streams not cached yet are written (``cache()``)."""
        self._configured_max_parallelism = max_parallelism
        self._translated: dict[int, list[_Endpoint]] = {}
        self._next_id = 1
        self._cache_write_nodes: list[int] = []

    def transform(self, t: Transformation) -> list[_Endpoint]:
        done = self._translated.get(t.id)
        if done is not None:
            return done
        if isinstance(t, PartitionTransformation):
            assert t.input is not None
            result = [
                _Endpoint(
                    e.node_id,
                    t.partitioner,
                    t.key_selector if t.partitioner in KEYED_PARTITIONERS else None,
                    e.output_tag,
                )
                for e in self.transform(t.input)
            ]
        elif isinstance(t, UnionTransformation):
            result = [e for i in t.union_inputs for e in self.transform(i)]
        elif isinstance(t, CacheTransformation):
            result = self._cache(t)
        elif isinstance(t, SideOutputTransformation):
            assert t.input is not None
            tag = t.output_tag
            upstream = self.transform(t.input)
            result = [_Endpoint(e.node_id, e.partitioner, e.key_selector, tag) for e in upstream]
        elif isinstance(
            t,
            SourceTransformation
            | OneInputTransformation
            | SinkTransformation
            | TimestampsAndWatermarksTransformation
            | TwoInputTransformation,
        ):
            result = [_Endpoint(self._add_operator(t))]
        else:
            raise InvalidJobGraphError(f"unknown transformation {type(t).__name__}")
        self._translated[t.id] = result
        return result

    def _add_operator(
        self,
        t: SourceTransformation
        | OneInputTransformation
        | SinkTransformation
        | TimestampsAndWatermarksTransformation
        | TwoInputTransformation,
    ) -> int:
        if isinstance(t, TwoInputTransformation):
            assert t.input1 is not None and t.input2 is not None
            first = self.transform(t.input1)
            second = self.transform(t.input2)
            inputs = first + second
            input_numbers = [0] * len(first) + [1] * len(second)
        else:
            inputs = [e for i in t.inputs for e in self.transform(i)]
            input_numbers = [0] * len(inputs)
        node_id = self._next_id
        self._next_id += 1
        parallelism = t.parallelism if t.parallelism is not None else self._env.get_parallelism()
        if t.max_parallelism is not None:
            max_parallelism = t.max_parallelism
        elif self._configured_max_parallelism > 0:
            max_parallelism = self._configured_max_parallelism
        else:
            max_parallelism = default_max_parallelism(parallelism)
        if parallelism > max_parallelism:
            raise InvalidJobGraphError(
                f"The parallelism ({parallelism}) of operator '{t.name}' is larger than its "
                f"maximum parallelism ({max_parallelism})."
            )
        node = StreamNode(
            id=node_id,
            name=t.name,
            kind="",
            parallelism=parallelism,
            max_parallelism=max_parallelism,
            slot_sharing_group=self._slot_sharing_group(t, inputs),
            parallelism_configured=t.parallelism is not None and t.parallelism_configured,
            max_parallelism_configured=t.max_parallelism is not None or self._configured_max_parallelism > 0,
            chaining_strategy=t.chaining_strategy,
            output_type=t.output_type,
            uid=t.uid,
            uid_hash=t.uid_hash,
            description=t.description,
            buffer_timeout=t.buffer_timeout,
            transformation_id=t.id,
        )
        if isinstance(t, SourceTransformation):
            node.kind = "source"
            node.name = f"Source: {t.name}"
            node.function = t.source
            node.boundedness = _boundedness_of(t.source)
            node.watermark_strategy = t.watermark_strategy
        elif isinstance(t, SinkTransformation):
            node.kind = "sink"
            node.name = f"Sink: {t.name}"
            node.function = t.sink
        elif isinstance(t, TimestampsAndWatermarksTransformation):
            node.kind = "timestamps_watermarks"
            node.function = t.watermark_strategy
        elif isinstance(t, TwoInputTransformation):
            node.kind = t.kind
            node.function = t.function
            if t.key_selector1 is not None:  # both inputs keyed, or only the first (keyed broadcast)
                node.key_selector = KeySelectorPair(t.key_selector1, t.key_selector2)
            node.config = dict(t.operator_config)
        else:
            node.kind = t.kind
            node.function = t.function
            node.key_selector = t.key_selector
            node.config = dict(t.operator_config)
        if t.buffer_timeout is not None:
            node.config["buffer_timeout"] = t.buffer_timeout
        self._graph.add_node(node)
        declared_inputs = [
            self._graph.node(e.node_id).output_type if e.output_tag is None else _tag_type(e.output_tag)
            for e, number in zip(inputs, input_numbers, strict=True)
            if number == 0
        ]
        node.input_type = next((d for d in declared_inputs if d is not None), None)
        for endpoint, number in zip(inputs, input_numbers, strict=True):
            self._add_edge(endpoint, node, number)
        return node_id

    def _cache(self, t: CacheTransformation) -> list[_Endpoint]:
        """A cached stream is read back (CacheRead); an uncached one is its input, written beside
        its consumers in BATCH execution (CacheWrite), as Flink's CacheTransformationTranslator."""
        if t.cached_dir is not None:
            read = SourceTransformation(
                name="CacheRead",
                parallelism=t.cached_parallelism,
                parallelism_configured=True,
                max_parallelism=t.max_parallelism,
                output_type=t.output_type,
                source=CacheRead(t.cached_dir, t.cached_parallelism, t.output_type),
            )
            return [_Endpoint(self._add_operator(read))]
        assert t.input is not None
        upstream = self.transform(t.input)
        if self._batch:
            parallelism = self._graph.node(upstream[0].node_id).parallelism
            directory = new_cache_dir(self._env)
            write = SinkTransformation(
                name="CacheWrite",
                parallelism=parallelism,
                parallelism_configured=True,  # the cache's files are one per subtask: keep them
                input=t.input,
                sink=CacheWrite(directory),
            )
            node_id = self._add_operator(write)
            self._graph.cache_writes.append(PendingCache(t, directory, parallelism))
            self._cache_write_nodes.append(node_id)
        return upstream

    def check_cache_writes(self) -> None:
        """Cached records are values: a cached stream with event timestamps is refused."""
        for node_id in self._cache_write_nodes:
            if self._graph.node(node_id).timestamped_inputs[0]:
                raise NotYetSupportedError(
                    "cache() of a stream whose records carry event timestamps is not supported yet "
                    "by flott (the cache keeps values only)"
                )

    def _slot_sharing_group(self, t: Transformation, inputs: list[_Endpoint]) -> str:
        """Explicit group, else the inputs' common group, else ``default`` (Flink's rule)."""
        explicit = _group_name(t.slot_sharing_group)
        if explicit:
            return explicit
        groups = {self._graph.node(e.node_id).slot_sharing_group for e in inputs}
        return groups.pop() if len(groups) == 1 else DEFAULT_SLOT_SHARING_GROUP

    def _add_edge(self, endpoint: _Endpoint, target: StreamNode, type_number: int = 0) -> None:
        upstream = self._graph.node(endpoint.node_id)
        partitioner = endpoint.partitioner
        if partitioner is None:
            partitioner = "forward" if upstream.parallelism == target.parallelism else "rebalance"
        elif partitioner == "forward" and upstream.parallelism != target.parallelism:
            raise InvalidJobGraphError(
                "Forward partitioning does not allow change of parallelism. Upstream operation: "
                f"{upstream.name}-{upstream.id} parallelism: {upstream.parallelism}, downstream operation: "
                f"{target.name}-{target.id} parallelism: {target.parallelism} You must use another "
                "partitioning strategy, such as broadcast, rebalance, shuffle or global."
            )
        self._graph.add_edge(
            StreamEdge(
                source_id=upstream.id,
                target_id=target.id,
                partitioner=partitioner,
                partitioner_defaulted=endpoint.partitioner is None,
                key_selector=endpoint.key_selector if partitioner in KEYED_PARTITIONERS else None,
                type_number=type_number,
                output_tag=endpoint.output_tag,
            )
        )


def _all_sources_bounded(transformations: list[Transformation]) -> bool:
    """Whether every source the program reads is bounded (a cached stream is a bounded source)."""
    seen: set[int] = set()
    todo = list(transformations)
    while todo:
        t = todo.pop()
        if t.id in seen:
            continue
        seen.add(t.id)
        if isinstance(t, SourceTransformation) and _boundedness_of(t.source) != "BOUNDED":
            return False
        if not (isinstance(t, CacheTransformation) and t.cached_dir is not None):
            todo.extend(t.inputs)
    return True


def _resolve_runtime_mode(configured: str, all_bounded: bool) -> str:
    mode = configured.strip().upper()
    if mode == "AUTOMATIC":
        return "BATCH" if all_bounded else "STREAMING"
    if mode == "BATCH":
        if not all_bounded:
            raise InvalidJobGraphError(
                "Detected an UNBOUNDED source with the 'execution.runtime-mode' set to 'BATCH'. "
                "This combination is not allowed, please set the 'execution.runtime-mode' to "
                "STREAMING or AUTOMATIC"
            )
        return "BATCH"
    if mode == "STREAMING":
        return "STREAMING"
    raise InvalidJobGraphError(
        f"execution.runtime-mode must be STREAMING, BATCH or AUTOMATIC, got {configured!r}"
    )


def generate_stream_graph(env: StreamExecutionEnvironment, job_name: str) -> StreamGraph:
    """The StreamGraph of everything recorded on ``env`` (which is left unchanged)."""
    transformations = env.transformations
    if not transformations:
        raise InvalidJobGraphError("No operators defined in streaming topology. Cannot execute.")
    config = env.configuration
    buffer_timeout = env.get_buffer_timeout()
    ec = env.get_config()
    graph = StreamGraph(
        job_name=job_name,
        config=config,
        runtime_mode="STREAMING",
        buffer_timeout=buffer_timeout,
        chaining_enabled=env.is_chaining_enabled(),
        chain_different_max_parallelism=env.is_chaining_of_operators_with_different_max_parallelism_enabled(),
        auto_generated_uids=ec.has_auto_generated_uids_enabled(),
    )
    runtime_mode = _resolve_runtime_mode(
        config.get(RUNTIME_MODE, "STREAMING"), _all_sources_bounded(transformations)
    )
    generator = _Generator(env, graph, ec.get_max_parallelism(), batch=runtime_mode == "BATCH")
    for t in transformations:
        generator.transform(t)
    assign_timestamp_paths(graph)
    generator.check_cache_writes()
    graph.runtime_mode = runtime_mode
    config[RUNTIME_MODE] = graph.runtime_mode
    config[BUFFER_TIMEOUT] = str(buffer_timeout)
    config[PIPELINE_NAME] = job_name
    return graph
