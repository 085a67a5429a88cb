"""DataStream, KeyedStream and DataStreamSink (PyFlink's ``pyflink.datastream.data_stream``).

Each call records a transformation (``flott.api.streaming.transformations``) and
returns a handle on it; nothing runs until ``env.execute()``. Names, error
types and messages follow PyFlink where a PyFlink program could observe them.
Features of later flott issues (broadcast state, custom partitioners, ...)
have their methods here and raise NotYetSupportedError naming the feature, so
a program fails on the first unsupported call with a clear message rather
than an AttributeError.
"""

from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, Any

from flott.api.common.functions import (
    FilterFunction,
    FlatMapFunction,
    KeySelector,
    MapFunction,
    Partitioner,
    ReduceFunction,
)
from flott.api.common.output_tag import OutputTag
from flott.api.common.slot_sharing_group import SlotSharingGroup
from flott.api.execution import get_pipeline_executor
from flott.api.streaming.functions import KeyedProcessFunction, ProcessFunction
from flott.api.streaming.transformations import (
    ChainingStrategy,
    OneInputTransformation,
    PartitionTransformation,
    SideOutputTransformation,
    SinkTransformation,
    SourceTransformation,
    TimestampsAndWatermarksTransformation,
    Transformation,
    UnionTransformation,
)
from flott.api.streaming.windowing import CountSlidingWindowAssigner, CountTumblingWindowAssigner
from flott.common import Types
from flott.common.type_conversion import with_declared_key_type
from flott.common.watermark_strategy import WatermarkStrategy
from flott.configuration import parse_memory_size
from flott.datastream.broadcast_stream import (
    BroadcastConnectedStream,
    BroadcastStream,
    check_broadcast_state_descriptors,
)
from flott.datastream.connected_streams import ConnectedStreams
from flott.datastream.connectors.print_sink import PrintSink
from flott.datastream.connectors.source_function import sink_from_sink_function
from flott.datastream.windowed_stream import AllWindowedStream, WindowedStream
from flott.errors import NotYetSupportedError
from flott.graph.cached_data_stream import CacheTransformation
from flott.graph.job_graph_generator import create_job_graph
from flott.runtime.operators.collect.protocol import ACCUMULATOR_PREFIX
from flott.runtime.operators.collect.result_fetcher import (
    CloseableIterator,
    CollectResultIterator,
    collected_value,
)
from flott.runtime.operators.collect.sink import (
    BATCH_SIZE_MAX_KEY,
    DEFAULT_BATCH_SIZE_MAX,
    SINK_NAME,
    CollectSink,
)
from flott.runtime.operators.specs import CustomPartitionerSpec

if TYPE_CHECKING:
    from flott.common.execution_config import ExecutionConfig
    from flott.datastream.stream_execution_environment import StreamExecutionEnvironment

__all__ = [
    "AllWindowedStream",
    "BroadcastConnectedStream",
    "BroadcastStream",
    "CachedDataStream",
    "CloseableIterator",
    "ConnectedStreams",
    "DataStream",
    "DataStreamSink",
    "KeyedStream",
    "WindowedStream",
]

_UID_HASH = re.compile(r"^[0-9a-fA-F]{32}$")
MAX_MAX_PARALLELISM = 32768


def not_yet(feature: str, call: str) -> NotYetSupportedError:
    """The error of a PyFlink method whose feature flott has not built yet."""
    return NotYetSupportedError(f"{call}: {feature} is not yet supported by flott")


def _check_function(func: Any, function_class: type, method: str) -> None:
    """PyFlink accepts a Function instance or any callable (``map(str)`` too); anything else is a
    TypeError. A Function *class* (``map(MyMapFunction)``) is refused: PyFlink would call the
    class on each record and emit the new instances."""
    if isinstance(func, function_class) or (callable(func) and not isinstance(func, type)):
        return
    if isinstance(func, type) and not hasattr(func, method):
        return  # a type used as a function
    if not isinstance(func, type) and callable(getattr(func, method, None)):
        return
    raise TypeError(f"The input must be a {function_class.__name__} or a callable function")


def _check_key_selector(key_selector: Any) -> None:
    if isinstance(key_selector, KeySelector) or (
        callable(key_selector) and not isinstance(key_selector, type)
    ):
        return
    raise TypeError("Parameter key_selector should be type of KeySelector or a callable function.")


def _pickled_byte_array_type() -> Any:
    """PyFlink's type of records without a declared type."""
    return Types.PICKLED_BYTE_ARRAY()


def _group_name(slot_sharing_group: str | SlotSharingGroup) -> str | SlotSharingGroup:
    if isinstance(slot_sharing_group, SlotSharingGroup):
        return slot_sharing_group
    if not isinstance(slot_sharing_group, str) or not slot_sharing_group:
        raise TypeError("slot_sharing_group must be a non-empty str or a SlotSharingGroup")
    return slot_sharing_group


class _Projection:
    """The map function of ``DataStream.project`` (module level so it pickles by reference)."""

    def __init__(self, field_indexes: tuple[int, ...]) -> None:
        self.field_indexes = field_indexes

    def __call__(self, value: Any) -> tuple[Any, ...]:
        return tuple(value[i] for i in self.field_indexes)


class DataStream:
    """A stream of records: a handle on the transformation that produces it."""

    def __init__(self, transformation: Transformation, env: StreamExecutionEnvironment) -> None:
        self._transformation = transformation
        self._env = env

    # --- introspection --------------------------------------------------------------------------

    @property
    def transformation(self) -> Transformation:
        """The recorded transformation (flott-specific: used by the graph generator and tests)."""
        return self._transformation

    def get_name(self) -> str:
        return self._transformation.name

    def get_type(self) -> Any:
        """The declared TypeInformation, or PICKLED_BYTE_ARRAY when none was declared (as PyFlink)."""
        declared = self._transformation.output_type
        return declared if declared is not None else _pickled_byte_array_type()

    def get_execution_environment(self) -> StreamExecutionEnvironment:
        return self._env

    def get_execution_config(self) -> ExecutionConfig:
        return self._env.get_config()

    # --- operator properties --------------------------------------------------------------------

    def _operator(self, call: str) -> Transformation:
        """The transformation a property setter applies to; only operators have properties."""
        t = self._transformation
        if isinstance(t, PartitionTransformation | UnionTransformation | SideOutputTransformation):
            if isinstance(t, SideOutputTransformation):
                what = "get_side_output()"
            elif isinstance(t, UnionTransformation):
                what = "union()"
            else:
                what = f"{t.partitioner} partitioning"
            raise ValueError(
                f"{call} applies to operators; the stream returned by {what} is not an operator. "
                "Call it on the operator before partitioning, or add an operator after it."
            )
        return t

    def name(self, name: str) -> DataStream:
        if not isinstance(name, str):
            raise TypeError("name must be a str")
        self._operator("name()").name = name
        return self

    def uid(self, uid: str) -> DataStream:
        """A stable, unique id: the operator's state is mapped by it when restoring a savepoint."""
        if not isinstance(uid, str) or not uid:
            raise ValueError("uid must be a non-empty str")
        self._operator("uid()").uid = uid
        return self

    def set_uid_hash(self, uid_hash: str) -> DataStream:
        """Use this 32-hex-digit hash as the operator id (to match state of an existing savepoint)."""
        if not isinstance(uid_hash, str) or not _UID_HASH.match(uid_hash):
            raise ValueError("Node hash must be a 32 character String that describes a hex code.")
        self._operator("set_uid_hash()").uid_hash = uid_hash.lower()
        return self

    def set_description(self, description: str) -> DataStream:
        self._operator("set_description()").description = description
        return self

    def set_parallelism(self, parallelism: int) -> DataStream:
        if not isinstance(parallelism, int) or parallelism < 1:
            raise ValueError("The parallelism of an operator must be at least 1.")
        t = self._operator("set_parallelism()")
        if isinstance(t, SourceTransformation) and t.non_parallel and parallelism != 1:
            raise ValueError("The parallelism of non parallel operator must be 1.")
        t.parallelism = parallelism
        t.parallelism_configured = True
        return self

    def set_max_parallelism(self, max_parallelism: int) -> DataStream:
        if not isinstance(max_parallelism, int) or not 0 < max_parallelism <= MAX_MAX_PARALLELISM:
            raise ValueError(f"Maximum parallelism must be between 1 and {MAX_MAX_PARALLELISM}.")
        self._operator("set_max_parallelism()").max_parallelism = max_parallelism
        return self

    def force_non_parallel(self) -> DataStream:
        t = self._operator("force_non_parallel()")
        t.parallelism = 1
        t.parallelism_configured = True
        t.max_parallelism = 1
        return self

    def slot_sharing_group(self, slot_sharing_group: str | SlotSharingGroup) -> DataStream:
        """Operators in different groups never share a slot, so they are never chained together."""
        self._operator("slot_sharing_group()").slot_sharing_group = _group_name(slot_sharing_group)
        return self

    def disable_chaining(self) -> DataStream:
        self._operator("disable_chaining()").chaining_strategy = ChainingStrategy.NEVER
        return self

    def start_new_chain(self) -> DataStream:
        self._operator("start_new_chain()").chaining_strategy = ChainingStrategy.HEAD
        return self

    def set_buffer_timeout(self, timeout_millis: int) -> DataStream:
        """Max ms a produced record waits in an output buffer (-1: until full; 0: flush every record)."""
        if timeout_millis < -1:
            raise ValueError("Timeout must be >= -1")
        self._operator("set_buffer_timeout()").buffer_timeout = int(timeout_millis)
        return self

    # --- one-input operators --------------------------------------------------------------------

    def _key_selector_for_operators(self) -> Any:
        """Operators on a KeyedStream are keyed (they get keyed state); plain streams are not."""
        return None

    def _one_input(
        self, kind: str, name: str, function: Any, output_type: Any, config: dict[str, Any] | None = None
    ) -> OneInputTransformation:
        t = OneInputTransformation(
            name=name,
            parallelism=self._env.get_parallelism(),
            output_type=output_type,
            input=self._transformation,
            kind=kind,
            function=function,
            key_selector=self._key_selector_for_operators(),
            operator_config=dict(config or {}),
        )
        self._env._add_operator(t)
        return t

    def map(self, func: Callable[[Any], Any] | MapFunction, output_type: Any = None) -> DataStream:
        _check_function(func, MapFunction, "map")
        return DataStream(self._one_input("map", "Map", func, output_type), self._env)

    def flat_map(self, func: Callable[[Any], Any] | FlatMapFunction, output_type: Any = None) -> DataStream:
        _check_function(func, FlatMapFunction, "flat_map")
        return DataStream(self._one_input("flat_map", "FlatMap", func, output_type), self._env)

    def filter(self, func: Callable[[Any], bool] | FilterFunction) -> DataStream:
        _check_function(func, FilterFunction, "filter")
        return DataStream(
            self._one_input("filter", "Filter", func, self._transformation.output_type), self._env
        )

    def process(self, func: ProcessFunction, output_type: Any = None) -> DataStream:
        if isinstance(func, KeyedProcessFunction):
            raise TypeError("KeyedProcessFunction can only be applied to a KeyedStream (call key_by first).")
        if not isinstance(func, ProcessFunction):
            raise TypeError("The input must be a ProcessFunction")
        return DataStream(self._one_input("process", "PROCESS", func, output_type), self._env)

    def project(self, *field_indexes: int) -> DataStream:
        """Select tuple fields (a Map named ``Projection``); the stream must declare a Tuple type."""
        declared = self._transformation.output_type
        field_types = getattr(declared, "get_field_types", None)
        if declared is None or "Tuple" not in type(declared).__name__ or not callable(field_types):
            raise ValueError("Only Tuple DataStreams can be projected.")
        if not field_indexes:
            raise ValueError("project() needs at least one field index")
        types = field_types()
        for i in field_indexes:
            if not isinstance(i, int) or not 0 <= i < len(types):
                raise ValueError(f"field index {i!r} is out of range for a tuple of arity {len(types)}")

        output_type = Types.TUPLE([types[i] for i in field_indexes])
        t = self._one_input("map", "Projection", _Projection(tuple(field_indexes)), output_type)
        return DataStream(t, self._env)

    def key_by(self, key_selector: Callable[[Any], Any] | KeySelector, key_type: Any = None) -> KeyedStream:
        """Partition by key (hash of the key into key groups). With ``key_type`` the keys go
        through that type as in PyFlink: one that does not fit fails the job, one the type
        converts (1.5 declared INT) is the converted key everywhere after the shuffle."""
        _check_key_selector(key_selector)
        key_selector = with_declared_key_type(key_selector, key_type)
        t = PartitionTransformation(
            name="Keyed",
            parallelism=self._transformation.parallelism,
            output_type=self._transformation.output_type,
            input=self._transformation,
            partitioner="hash",
            key_selector=key_selector,
            key_type=key_type,
        )
        return KeyedStream(t, self._env, self)

    def assign_timestamps_and_watermarks(self, watermark_strategy: Any) -> DataStream:
        """Timestamps from the strategy's TimestampAssigner and watermarks from its generator, from
        here on (an operator chained to this one; watermarks from upstream are replaced)."""

        if not isinstance(watermark_strategy, WatermarkStrategy):
            raise TypeError("assign_timestamps_and_watermarks() needs a WatermarkStrategy")
        t = TimestampsAndWatermarksTransformation(
            name="Timestamps/Watermarks",
            parallelism=self._transformation.parallelism,
            output_type=self._transformation.output_type,
            input=self._transformation,
            watermark_strategy=watermark_strategy,
        )
        return DataStream(t, self._env)

    # --- partitioning ---------------------------------------------------------------------------

    def _partition(self, partitioner: str) -> DataStream:
        t = PartitionTransformation(
            name=partitioner.upper(),
            parallelism=self._transformation.parallelism,
            output_type=self._transformation.output_type,
            input=self._transformation,
            partitioner=partitioner,
        )
        return DataStream(t, self._env)

    def forward(self) -> DataStream:
        """One-to-one to the consumer's subtask of the same index (needs equal parallelism)."""
        return self._partition("forward")

    def rebalance(self) -> DataStream:
        return self._partition("rebalance")

    def rescale(self) -> DataStream:
        return self._partition("rescale")

    def shuffle(self) -> DataStream:
        return self._partition("shuffle")

    def global_(self) -> DataStream:
        """All records to the consumer's first subtask (Flink's ``global()``, a Python keyword)."""
        return self._partition("global")

    def broadcast(
        self, broadcast_state_descriptor: Any = None, *other_broadcast_state_descriptors: Any
    ) -> Any:
        """Without arguments: every record to every consumer subtask. With MapStateDescriptors: a
        BroadcastStream, to ``connect`` to another stream; the descriptors name its broadcast states."""
        if broadcast_state_descriptor is not None:
            descriptors = check_broadcast_state_descriptors(
                [broadcast_state_descriptor, *other_broadcast_state_descriptors]
            )
            return BroadcastStream(self._partition("broadcast"), descriptors)
        return self._partition("broadcast")

    def partition_custom(
        self,
        partitioner: Callable[[Any, int], int] | Partitioner,
        key_selector: Callable[[Any], Any] | KeySelector,
    ) -> DataStream:
        """Send each record to the subtask ``partitioner.partition(key, num_partitions)`` returns for
        its key (``num_partitions``: the consumer's parallelism); a plain function works too."""
        if not isinstance(partitioner, Partitioner) and not callable(partitioner):
            raise TypeError("Parameter partitioner should be type of Partitioner or a callable function.")
        if not isinstance(key_selector, KeySelector) and not callable(key_selector):
            raise TypeError("Parameter key_selector should be type of KeySelector or a callable function.")
        t = PartitionTransformation(
            name="CUSTOM",
            parallelism=self._transformation.parallelism,
            output_type=self._transformation.output_type,
            input=self._transformation,
            partitioner="custom",
            key_selector=CustomPartitionerSpec(partitioner, key_selector),
        )
        return DataStream(t, self._env)

    def union(self, *streams: DataStream) -> DataStream:
        """One stream of the records of all streams (each keeps its own partitioning)."""
        inputs = [self._transformation]
        declared = self._transformation.output_type
        for s in streams:
            if not isinstance(s, DataStream):
                raise TypeError(f"union() takes DataStreams, got {type(s).__name__}")
            if s._env is not self._env:
                raise ValueError("Cannot union streams of different execution environments")
            other = s._transformation.output_type
            if declared is not None and other is not None and declared != other:
                raise ValueError(f"Cannot union streams of different types: {declared} and {other}")
            inputs.append(s._transformation)
        t = UnionTransformation(
            name="Union",
            parallelism=self._transformation.parallelism,
            output_type=declared,
            union_inputs=inputs,
        )
        return DataStream(t, self._env)

    # --- sinks ----------------------------------------------------------------------------------

    def _sink(self, sink: Any, name: str) -> DataStreamSink:
        t = SinkTransformation(
            name=name,
            parallelism=self._env.get_parallelism(),
            input=self._transformation,
            sink=sink,
        )
        self._env._add_operator(t)
        return DataStreamSink(t, self._env)

    def sink_to(self, sink: Any) -> DataStreamSink:
        """Write to a Sink (FileSink, PrintSink, ...); the operator is named ``Sink: Writer``
        until renamed with ``.name(...)`` (then ``Sink: <name>``)."""
        if not callable(getattr(sink, "create_writer", None)):
            raise TypeError(f"sink_to() needs a Sink (with create_writer()), got {type(sink).__name__}")
        return self._sink(sink, "Writer")

    def add_sink(self, sink_func: Any) -> DataStreamSink:
        """A SinkFunction, adapted onto the Sink contract by the connectors package."""
        return self._sink(sink_from_sink_function(sink_func), "Unnamed")

    def print(self, sink_identifier: str | None = None) -> DataStreamSink:
        """Print records to stdout (``N> record`` when parallelism > 1), as PyFlink does."""
        return self._sink(PrintSink(sink_identifier), "Print to Std. Out")

    def execute_and_collect(self, job_execution_name: str | None = None, limit: int | None = None) -> Any:
        """Run the job and iterate its results here: a CloseableIterator (close it, or use ``with``,
        to cancel the job early), or with ``limit`` a list of at most that many results."""
        results = execute_and_collect(self, job_execution_name, limit)
        return results if isinstance(results, list) else CloseableIterator(results, self.get_type())

    # --- windows, two inputs, side outputs -----------------------------------------------------

    def connect(self, ds: Any) -> Any:
        """Connect with another stream for a two-input operator (CoMap, CoFlatMap, CoProcess), or
        with a BroadcastStream for a (Keyed)BroadcastProcessFunction (a BroadcastConnectedStream)."""
        if isinstance(ds, BroadcastStream):
            return BroadcastConnectedStream(self, ds, ds.broadcast_state_descriptors)
        if not isinstance(ds, DataStream):
            raise TypeError(f"connect() takes a DataStream, got {type(ds).__name__}")
        return ConnectedStreams(self, ds)

    def window_all(self, window_assigner: Any) -> AllWindowedStream:
        """Windows over the whole (non-keyed) stream, evaluated by a single subtask."""
        return AllWindowedStream(self, window_assigner)

    def count_window_all(self, size: int, slide: int = 0) -> AllWindowedStream:
        """Count windows over the whole stream (``slide`` 0: tumbling)."""

        if slide == 0:
            return self.window_all(CountTumblingWindowAssigner(size))
        return self.window_all(CountSlidingWindowAssigner(size, slide))

    def get_side_output(self, output_tag: OutputTag) -> DataStream:
        """The records this operator emitted to ``output_tag`` (``yield output_tag, value`` in a
        process function, or late data of a window)."""

        if not isinstance(output_tag, OutputTag):
            raise TypeError("get_side_output() takes an OutputTag")
        t = self._transformation
        if t.is_virtual:
            raise ValueError("get_side_output() applies to the output of an operator (process, window, ...)")
        side = SideOutputTransformation(
            name=f"SideOutput({output_tag.tag_id})",
            parallelism=t.parallelism,
            output_type=output_tag.type_info,
            input=t,
            output_tag=output_tag,
        )
        return DataStream(side, self._env)

    # --- later issues ---------------------------------------------------------------------------

    def cache(self) -> CachedDataStream:
        """Cache this stream's result: the first BATCH job using it computes and keeps it, later
        jobs of this environment read it instead of recomputing (see ``cached_data_stream``)."""
        source = self._transformation
        if isinstance(source, PartitionTransformation | UnionTransformation):
            raise ValueError(
                "cache() applies to the output of an operator or a side output, not to a stream "
                "returned by a partitioning method or union()"
            )
        t = CacheTransformation(
            name="Cache",
            parallelism=source.parallelism,
            max_parallelism=source.max_parallelism,
            output_type=source.output_type,
            input=source,
        )
        return CachedDataStream(t, self._env)

    def iterate(self, max_wait_time_ms: int = 0) -> Any:
        raise not_yet("iterations", "DataStream.iterate")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._transformation.name!r})"


# ``ds.global()`` is spelled as in Flink for programs that reach it through getattr.
setattr(DataStream, "global", DataStream.global_)


class KeyedStream(DataStream):
    """A stream partitioned by key: aggregations, keyed process functions and keyed state.

    Map/flat_map/filter/process on a KeyedStream run keyed (they may use keyed
    state in ``open``/per record), as in PyFlink; their input edge is the hash edge.
    """

    class AccumulateType(Enum):
        """The built-in aggregations (``sum``/``min``/``max``/``min_by``/``max_by``)."""

        MIN = 1
        MAX = 2
        MIN_BY = 3
        MAX_BY = 4
        SUM = 5

    def __init__(
        self,
        transformation: PartitionTransformation,
        env: StreamExecutionEnvironment,
        origin_stream: DataStream,
    ) -> None:
        super().__init__(transformation, env)
        self._origin_stream = origin_stream

    @property
    def key_selector(self) -> Any:
        assert isinstance(self._transformation, PartitionTransformation)
        return self._transformation.key_selector

    def _key_selector_for_operators(self) -> Any:
        return self.key_selector

    def get_name(self) -> str:
        return self._origin_stream.get_name()

    # --- what PyFlink refuses on a KeyedStream --------------------------------------------------

    def _unsupported(self, what: str) -> ValueError:
        return ValueError(f"{what} for KeyedStream is not supported.")

    def name(self, name: str) -> DataStream:
        raise self._unsupported("Set name")

    def uid(self, uid: str) -> DataStream:
        raise self._unsupported("Set uid")

    def set_uid_hash(self, uid_hash: str) -> DataStream:
        raise self._unsupported("Set uid hash")

    def set_description(self, description: str) -> DataStream:
        raise self._unsupported("Set description")

    def set_parallelism(self, parallelism: int) -> DataStream:
        raise self._unsupported("Set parallelism")

    def set_max_parallelism(self, max_parallelism: int) -> DataStream:
        raise self._unsupported("Set max parallelism")

    def force_non_parallel(self) -> DataStream:
        raise self._unsupported("Set parallelism")

    def slot_sharing_group(self, slot_sharing_group: str | SlotSharingGroup) -> DataStream:
        raise self._unsupported("Setting slot sharing group")

    def disable_chaining(self) -> DataStream:
        raise self._unsupported("Disable chaining")

    def start_new_chain(self) -> DataStream:
        raise self._unsupported("Start new chain")

    def set_buffer_timeout(self, timeout_millis: int) -> DataStream:
        raise self._unsupported("Set buffer timeout")

    def _partition(self, partitioner: str) -> DataStream:
        raise ValueError("Cannot override partitioning for KeyedStream.")

    def broadcast(self, *args: Any) -> Any:
        raise ValueError("Cannot override partitioning for KeyedStream.")

    def partition_custom(self, partitioner: Any, key_selector: Any) -> DataStream:
        raise ValueError("Cannot override partitioning for KeyedStream.")

    def cache(self) -> CachedDataStream:
        raise ValueError("Cache for KeyedStream is not supported.")

    def key_by(self, key_selector: Callable[[Any], Any] | KeySelector, key_type: Any = None) -> KeyedStream:
        """Re-keys the original stream (PyFlink semantics)."""
        return self._origin_stream.key_by(key_selector, key_type)

    # --- keyed operators ------------------------------------------------------------------------

    def process(self, func: Any, output_type: Any = None) -> DataStream:
        if not isinstance(func, KeyedProcessFunction):
            raise TypeError("KeyedProcessFunction is required for KeyedStream.")
        return DataStream(self._one_input("keyed_process", "KEYED PROCESS", func, output_type), self._env)

    def reduce(self, func: Callable[[Any, Any], Any] | ReduceFunction) -> DataStream:
        """Rolling reduce per key; the output type is the input's declared type."""
        _check_function(func, ReduceFunction, "reduce")
        t = self._one_input("reduce", "Reduce", func, self._transformation.output_type)
        return DataStream(t, self._env)

    def _aggregation(self, kind: str, field: int | str, call: str) -> DataStream:
        if isinstance(field, bool) or not isinstance(field, int | str):
            raise TypeError(f"{call}: the field must be a position (int) or a field name (str)")
        if isinstance(field, int) and field < 0:
            raise ValueError(f"{call}: the field position must be >= 0")
        t = self._one_input(
            kind, "Reduce", None, self._transformation.output_type, {"field": field}
        )
        return DataStream(t, self._env)

    def sum(self, position_to_sum: int | str = 0) -> DataStream:
        return self._aggregation("sum", position_to_sum, "KeyedStream.sum")

    def min(self, position_to_min: int | str = 0) -> DataStream:
        return self._aggregation("min", position_to_min, "KeyedStream.min")

    def max(self, position_to_max: int | str = 0) -> DataStream:
        return self._aggregation("max", position_to_max, "KeyedStream.max")

    def min_by(self, position_to_min_by: int | str = 0) -> DataStream:
        return self._aggregation("min_by", position_to_min_by, "KeyedStream.min_by")

    def max_by(self, position_to_max_by: int | str = 0) -> DataStream:
        return self._aggregation("max_by", position_to_max_by, "KeyedStream.max_by")

    def window(self, window_assigner: Any) -> WindowedStream:
        """Windows per key: elements are grouped by key and by the windows the assigner gives them."""
        return WindowedStream(self, window_assigner)

    def count_window(self, size: int, slide: int = 0) -> WindowedStream:
        """Windows of ``size`` elements per key (``slide`` 0: tumbling, else a new one every ``slide``)."""

        if slide == 0:
            return WindowedStream(self, CountTumblingWindowAssigner(size))
        return WindowedStream(self, CountSlidingWindowAssigner(size, slide))


class DataStreamSink:
    """The end of a stream: only operator properties can be set on it."""

    def __init__(self, transformation: SinkTransformation, env: StreamExecutionEnvironment) -> None:
        self._transformation = transformation
        self._env = env

    @property
    def transformation(self) -> SinkTransformation:
        return self._transformation

    def get_name(self) -> str:
        return self._transformation.name

    def name(self, name: str) -> DataStreamSink:
        """The sink operator is shown as ``Sink: <name>``."""
        if not isinstance(name, str):
            raise TypeError("name must be a str")
        self._transformation.name = name
        return self

    def uid(self, uid: str) -> DataStreamSink:
        if not isinstance(uid, str) or not uid:
            raise ValueError("uid must be a non-empty str")
        self._transformation.uid = uid
        return self

    def set_uid_hash(self, uid_hash: str) -> DataStreamSink:
        if not isinstance(uid_hash, str) or not _UID_HASH.match(uid_hash):
            raise ValueError("Node hash must be a 32 character String that describes a hex code.")
        self._transformation.uid_hash = uid_hash.lower()
        return self

    def set_description(self, description: str) -> DataStreamSink:
        self._transformation.description = description
        return self

    def set_parallelism(self, parallelism: int) -> DataStreamSink:
        if not isinstance(parallelism, int) or parallelism < 1:
            raise ValueError("The parallelism of an operator must be at least 1.")
        self._transformation.parallelism = parallelism
        self._transformation.parallelism_configured = True
        return self

    def set_max_parallelism(self, max_parallelism: int) -> DataStreamSink:
        if not isinstance(max_parallelism, int) or not 0 < max_parallelism <= MAX_MAX_PARALLELISM:
            raise ValueError(f"Maximum parallelism must be between 1 and {MAX_MAX_PARALLELISM}.")
        self._transformation.max_parallelism = max_parallelism
        return self

    def disable_chaining(self) -> DataStreamSink:
        self._transformation.chaining_strategy = ChainingStrategy.NEVER
        return self

    def start_new_chain(self) -> DataStreamSink:
        self._transformation.chaining_strategy = ChainingStrategy.HEAD
        return self

    def slot_sharing_group(self, slot_sharing_group: str | SlotSharingGroup) -> DataStreamSink:
        self._transformation.slot_sharing_group = _group_name(slot_sharing_group)
        return self

    def __repr__(self) -> str:
        return f"DataStreamSink({self._transformation.name!r})"


class CachedDataStream(DataStream):
    """A DataStream whose result the first BATCH job computing it caches for the environment's
    later jobs (``flott.graph.cached_data_stream``); operator properties cannot be set on it."""

    def invalidate(self) -> None:
        """Drop the cached result; a later job computes it again (and caches it, in BATCH mode)."""
        t = self._transformation
        assert isinstance(t, CacheTransformation)
        if t.cached_dir is not None:
            shutil.rmtree(t.cached_dir, ignore_errors=True)
        t.cached_dir = None

    def _refuse(self, what: str) -> ValueError:
        return ValueError(f"{what} for CachedDataStream is not supported.")

    def get_name(self) -> str:
        raise ValueError("Get name of CachedDataStream is not supported.")

    def name(self, name: str) -> DataStream:
        raise self._refuse("Set name")

    def uid(self, uid: str) -> DataStream:
        raise self._refuse("Set uid")

    def set_uid_hash(self, uid_hash: str) -> DataStream:
        raise self._refuse("Set uid hash")

    def set_description(self, description: str) -> DataStream:
        raise self._refuse("Set description")

    def set_parallelism(self, parallelism: int) -> DataStream:
        raise self._refuse("Set parallelism")

    def set_max_parallelism(self, max_parallelism: int) -> DataStream:
        raise self._refuse("Set max parallelism")

    def force_non_parallel(self) -> DataStream:
        raise self._refuse("Set force non-parallel")

    def set_buffer_timeout(self, timeout_millis: int) -> DataStream:
        raise self._refuse("Set buffer timeout")

    def start_new_chain(self) -> DataStream:
        raise self._refuse("Start new chain")

    def disable_chaining(self) -> DataStream:
        raise self._refuse("Disable chaining")

    def slot_sharing_group(self, slot_sharing_group: str | SlotSharingGroup) -> DataStream:
        raise self._refuse("Setting slot sharing group")


COLLECT_SINK_UID = "flott-data-stream-collect-sink"


def execute_and_collect(
    stream: DataStream, job_execution_name: str | None = None, limit: int | None = None
) -> CollectResultIterator | list[Any]:
    """``DataStream.execute_and_collect``: add the collect sink, submit the job, iterate its results.

    As Flink: the job is named ``DataStream Collect`` unless named, it holds every
    transformation recorded so far (they are cleared), and with ``limit`` the
    iterator is closed after that many results, cancelling the job if it still runs.
    """
    if limit is not None and (not isinstance(limit, int) or limit <= 0):
        raise ValueError("Limit must be greater than 0")
    env = stream.get_execution_environment()
    config = env.configuration
    raw = config.get(BATCH_SIZE_MAX_KEY)
    max_bytes = parse_memory_size(BATCH_SIZE_MAX_KEY, raw) if raw else DEFAULT_BATCH_SIZE_MAX
    accumulator_name = ACCUMULATOR_PREFIX + str(uuid.uuid4())
    # A fixed uid: the user cannot name this sink, so a "set a uid" warning about it would be noise.
    stream._sink(CollectSink(accumulator_name, max_bytes), SINK_NAME).set_parallelism(1).uid(COLLECT_SINK_UID)
    name = job_execution_name if job_execution_name is not None else "DataStream Collect"
    job_graph = create_job_graph(env.get_stream_graph(name, clear_transformations=True))
    wanted = f"Sink: {SINK_NAME}"
    operator_ids = [op.operator_id for v in job_graph.vertices for op in v.operators if op.name == wanted]
    checkpointed = env.get_checkpoint_config().is_checkpointing_enabled()
    job_client = get_pipeline_executor(config).execute(job_graph)
    iterator = CollectResultIterator(
        job_client, job_graph.job_id, job_graph.job_name, operator_ids[-1], accumulator_name, checkpointed
    )
    if limit is None:
        return iterator
    results: list[Any] = []
    type_info = stream.get_type()
    try:
        while len(results) < limit and iterator.has_next():
            results.append(collected_value(iterator.next(), type_info))
    finally:
        iterator.close()
    return results
