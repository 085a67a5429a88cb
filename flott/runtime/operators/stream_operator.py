"""The operator contract of a task's chain, batch at a time (Flink's StreamOperator).

Flink hands operators one record at a time through virtual calls; in Python
that per-record dispatch would cost more than most user functions. Here an
operator takes a *list* of records and returns the list it produces, so a
stateless operator is one C-level pass (``list(map(fn, batch))``) and the
chain's overhead is a few calls per batch, not per record.

What an operator emits *outside* a batch (records of a firing timer or
window, watermarks, watermark status) goes to its :class:`Output`, which the
chain wires to the rest of the chain and, at the end, to the task's writers.
That path is not per record, so it may be a few calls deeper.

Event time: on paths that need timestamps (downstream of a timestamp assigner
or a window, decided when the JobGraph is built), every record is a
``(value, timestamp)`` pair (timestamp None: the record has none). The
operator's descriptor says so (:data:`TIMESTAMPED_INPUT`,
:data:`TIMESTAMPED_OUTPUT`); paths without event time keep bare values, so
they pay nothing for it.

User functions arrive as lambdas, plain functions or PyFlink-style Function
objects. We duck-type them by PyFlink's method names and resolve the method
*once* when the operator is built, never per record.
"""

from __future__ import annotations

import copy
import functools
import logging
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from flott.errors import InvalidJobGraphError
from flott.runtime.checkpoint.incremental import restore_incremental
from flott.runtime.checkpoint.snapshot import read_operator_state, restore_keyed_backend
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage
from flott.runtime.execution.environment import TaskEnvironment
from flott.runtime.jobgraph import OperatorDescriptor
from flott.runtime.messages.execution import OperatorRestore
from flott.runtime.operators.processing_time import ProcessingTimeService
from flott.runtime.operators.runtime_context import StreamingRuntimeContext
from flott.runtime.operators.state_backend_loader import create_keyed_state_backend
from flott.runtime.operators.watermark import LONG_MIN, WatermarkStatus
from flott.runtime.state.backend import KeyedStateBackend
from flott.runtime.state.key_groups import KeyGroupRange

log = logging.getLogger(__name__)

TIMESTAMPED_INPUT = "timestamped_input"
"""Descriptor config key: the operator's (first) input records are ``(value, timestamp)`` pairs."""
TIMESTAMPED_INPUT2 = "timestamped_input2"
"""Descriptor config key: the second input's records of a two-input operator are pairs."""
TIMESTAMPED_OUTPUT = "timestamped_output"
"""Descriptor config key: the operator emits ``(value, timestamp)`` pairs."""
SIDE_OUTPUT_TAGS = "side_output_tags"
"""Descriptor config key: ids of the OutputTags whose records leave the task (consumed downstream);
side outputs of an operator not listed are dropped, as PyFlink drops unconsumed side outputs."""


def user_method(obj: Any, method_name: str, what: str) -> Callable[..., Any]:
    """The callable to invoke for ``obj``: its PyFlink method ``method_name``, or ``obj`` itself.

    ``ds.map(MyMapFunction())`` and ``ds.map(lambda x: ...)`` both work, as in PyFlink.
    """
    method = getattr(obj, method_name, None)
    if isinstance(obj, type):
        if method is not None:
            raise InvalidJobGraphError(f"{what}: got the class {obj.__name__}; pass an instance of it")
        return obj  # a type used as a function, e.g. ds.map(str)
    if method is not None and callable(method):
        return method
    if callable(obj):
        return obj
    raise InvalidJobGraphError(
        f"{what}: expected a function or an object with a {method_name}() method, got {type(obj).__name__}"
    )


def open_user_function(obj: Any, runtime_context: Any) -> None:
    """Call PyFlink's ``Function.open(runtime_context)`` if the object has one."""
    if isinstance(obj, type):
        return
    opener = getattr(obj, "open", None)
    if opener is not None and callable(opener):
        opener(runtime_context)


def close_user_function(obj: Any) -> None:
    """Call PyFlink's ``Function.close()`` if the object has one."""
    if isinstance(obj, type):
        return
    closer = getattr(obj, "close", None)
    if closer is not None and callable(closer):
        closer()


def private_copy(obj: Any, what: str) -> Any:
    """A copy of a user function object, for an operator that must not share it.

    Function objects keep per-operator things on ``self`` in ``open()`` (state
    handles, counters). Blob ids are content addresses, so two equal function
    objects in one chain (``.map(Counter()).map(Counter())``) arrive as one
    blob, i.e. one cached object; the second operator gets a copy. Plain
    functions and lambdas copy to themselves.
    """
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, type)):
        return obj
    try:
        return copy.deepcopy(obj)
    except Exception as e:
        log.warning("%s (%s) cannot be copied per operator, sharing it: %s", what, type(obj).__name__, e)
        return obj


@dataclass
class OperatorSetup:
    """What an operator needs from its task to build itself (Flink's StreamOperatorParameters)."""

    env: TaskEnvironment
    descriptor: OperatorDescriptor
    streaming: bool
    """STREAMING: keyed aggregations emit every update; BATCH: only the final value per key."""
    batch_size: int
    claimed: set[str] = field(default_factory=set)
    """Blob ids of function objects already taken by an operator of this task (shared by the chain)."""
    processing_time_service: ProcessingTimeService = field(default_factory=ProcessingTimeService)
    """The task's wall-clock callbacks (shared by the chain): processing-time timers, periodic watermarks."""

    @property
    def restore(self) -> OperatorRestore | None:
        """This operator's part of the snapshot the task starts from (None: start empty)."""
        task_restore = self.env.restore
        if task_restore is None:
            return None
        return task_restore.operators.get(self.descriptor.operator_id)

    def restored_operator_state(self, state_name: str) -> list[Any]:
        """The elements of operator list state ``state_name`` this subtask restores (its share)."""
        restore = self.restore
        if restore is None:
            return []
        storage = checkpoint_storage()
        out: list[Any] = []
        for path, name, start, end in restore.operator_state:
            if name == state_name:
                out.extend(read_operator_state(storage, path).get(name, [])[start:end])
        return out

    def restored_union_state(self, state_name: str) -> list[Any]:
        """Every old subtask's elements of UNION list state ``state_name`` (in subtask order)."""
        restore = self.restore
        if restore is None:
            return []
        storage = checkpoint_storage()
        out: list[Any] = []
        for path in restore.union_state_files:
            out.extend(read_operator_state(storage, path).get(state_name, []))
        return out

    @property
    def config(self) -> dict[str, Any]:
        return self.descriptor.config

    @property
    def timestamped_input(self) -> bool:
        return bool(self.descriptor.config.get(TIMESTAMPED_INPUT, False))

    @property
    def timestamped_output(self) -> bool:
        return bool(self.descriptor.config.get(TIMESTAMPED_OUTPUT, False))

    @property
    def side_output_tags(self) -> frozenset[str]:
        return frozenset(self.descriptor.config.get(SIDE_OUTPUT_TAGS, ()))

    def load(self, blob_id: str | None, what: str) -> Any:
        if blob_id is None:
            raise InvalidJobGraphError(
                f"operator '{self.descriptor.name}' ({self.descriptor.kind}) has no {what}"
            )
        return self.env.load_user_object(blob_id)

    def load_optional(self, blob_id: str | None) -> Any:
        return None if blob_id is None else self.env.load_user_object(blob_id)

    def load_function(self, blob_id: str | None, what: str) -> Any:
        """A user function object this operator owns (copied if another operator took it already)."""
        obj = self.load(blob_id, what)
        assert blob_id is not None
        if blob_id in self.claimed:
            return private_copy(obj, f"{what} of '{self.descriptor.name}'")
        self.claimed.add(blob_id)
        return obj

    def key_selector(self) -> tuple[Any, Callable[[Any], Any]]:
        """The key selector object and its resolved ``get_key`` callable."""
        obj = self.load_function(self.descriptor.key_selector, "key selector")
        return obj, user_method(obj, "get_key", f"key selector of '{self.descriptor.name}'")

    def keyed_state_backend(self) -> KeyedStateBackend:
        """The operator's keyed state backend, with the state of its key groups restored if any."""
        env = self.env
        key_groups = KeyGroupRange.of_operator(env.max_parallelism, env.parallelism, env.subtask_index)
        backend = _create_backend(env, key_groups, self.descriptor.operator_id)
        restore = self.restore
        if restore is not None and restore.key_group_files:
            restore_keyed_backend(checkpoint_storage(), backend, restore.key_group_files)
        if restore is not None and restore.incremental:

            restore_incremental(
                checkpoint_storage(), backend, restore.incremental, getattr(backend, "working_dir", None)
            )
        return backend

    def runtime_context(self, backend: KeyedStateBackend | None) -> StreamingRuntimeContext:
        return StreamingRuntimeContext(
            self.env, backend, self.descriptor.operator_id, self.descriptor.name
        )


@functools.cache
def checkpoint_storage() -> Any:
    """The process's fsspec checkpoint storage (one per TaskExecutor process is enough)."""
    return FsspecCheckpointStorage()


def _create_backend(env: TaskEnvironment, key_groups: KeyGroupRange, operator_id: str) -> KeyedStateBackend:
    """The configured backend (``state.backend.type``: hashmap or rocksdb)."""
    return create_keyed_state_backend(
        env.job_config,
        env.max_parallelism,
        key_groups,
        operator_id=operator_id,
        subtask_index=env.subtask_index,
    )


class Output:
    """Where an operator's out-of-batch emissions go (Flink's ``Output``); wired by the chain."""

    def collect(self, records: list[Any]) -> None:
        """Records (a timer's or window's results) for the operators after this one."""
        raise NotImplementedError

    def emit_watermark(self, timestamp: int) -> None:
        raise NotImplementedError

    def emit_watermark_status(self, status: WatermarkStatus) -> None:
        raise NotImplementedError


class CollectingOutput(Output):
    """Keeps what an operator emitted: the output of an operator used on its own (tests, tools)."""

    def __init__(self) -> None:
        self.records: list[Any] = []
        self.watermarks: list[int] = []
        self.statuses: list[WatermarkStatus] = []

    def collect(self, records: list[Any]) -> None:
        self.records.extend(records)

    def emit_watermark(self, timestamp: int) -> None:
        self.watermarks.append(timestamp)

    def emit_watermark_status(self, status: WatermarkStatus) -> None:
        self.statuses.append(status)

    def take(self) -> list[Any]:
        records, self.records = self.records, []
        return records


class DeferredOutput(Output):
    """The operator's output as it is *when called*: the chain replaces it after construction."""

    __slots__ = ("_op",)

    def __init__(self, op: StreamOperator) -> None:
        self._op = op

    def collect(self, records: list[Any]) -> None:
        self._op.output.collect(records)

    def emit_watermark(self, timestamp: int) -> None:
        self._op.output.emit_watermark(timestamp)

    def emit_watermark_status(self, status: WatermarkStatus) -> None:
        self._op.output.emit_watermark_status(status)


class StreamOperator:
    """One operator of a chain. Subclasses override what they need.

    Lifecycle: :meth:`open` once, :meth:`process_batch` per input batch
    (:meth:`process_batch2` for the second input of a two-input operator),
    :meth:`process_watermark` / :meth:`process_watermark_status` when event
    time advances, :meth:`end_input` once when the input is exhausted (bounded
    input only), :meth:`close` once, also after a failure.

    Stateless one-to-one/one-to-many operators (map, filter, flat_map) set
    :attr:`lazy` and implement :meth:`transform`: the chain then composes them
    into the next operator's input as C-level iterators, so a batch is not
    copied into a new list at every step (measured: ~10% of a word count).
    """

    lazy = False
    """True if :meth:`transform` is implemented; :meth:`process_batch` is then ``list(transform(...))``."""

    def __init__(self, setup: OperatorSetup) -> None:
        self.name = setup.descriptor.name
        self.kind = setup.descriptor.kind
        self.output: Output = CollectingOutput()
        self.current_watermark = LONG_MIN
        """The last watermark this operator received (Flink's ``currentWatermark``)."""

    def set_output(self, output: Output) -> None:
        self.output = output

    def open(self) -> None:
        """Open user functions (``open(runtime_context)``); resolve anything per-record code needs."""

    def transform(self, records: Iterable[Any]) -> Iterable[Any]:
        """Lazy operators: the outputs for ``records``, as an iterator evaluated by the consumer."""
        raise NotImplementedError(f"{type(self).__name__} is not a lazy operator")

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        """Process one batch (a list, or the lazy output of the operators before); return the outputs."""
        return list(self.transform(batch))

    def process_batch2(self, batch: Iterable[Any]) -> list[Any]:
        """Two-input operators: one batch of the second input."""
        raise NotImplementedError(f"{type(self).__name__} has one input")

    def process_watermark(self, timestamp: int) -> None:
        """Event time reached ``timestamp``: fire what is due (via :attr:`output`), then forward it."""
        self.current_watermark = timestamp
        self.output.emit_watermark(timestamp)

    def process_watermark_status(self, status: WatermarkStatus) -> None:
        self.output.emit_watermark_status(status)

    def end_input(self) -> list[Any]:
        """The input ended: return what must still be emitted (BATCH-mode aggregates)."""
        return []

    def end_input2(self) -> None:
        """Two-input operators: the second input ended (the first may still run); emissions go to
        :attr:`output`. Flink's ``BoundedMultiInput.endInput(2)``."""

    def close(self) -> None:
        """Release resources and call user ``close()``; called once, also after failures."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
