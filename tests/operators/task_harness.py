"""A small test harness for StreamTasks (Flink's StreamTaskTestHarness, in spirit).

In-memory fakes of the data-exchange contract (``flott.runtime.io.network.api``)
that behave like the real thing where it matters to a task: bounded queues
(a full consumer blocks the producer's ``emit``), records pickled on emit (a
producer cannot mutate what it already sent), EndOfPartition per channel,
``close``/``release`` waking blocked calls. Plus in-memory sources and sinks
and :func:`run_job`, which wires vertices and edges into threads.
"""

from __future__ import annotations

import pickle
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import cloudpickle

from flott.datastream.connectors.base import Boundedness
from flott.errors import TaskCancelledError
from flott.runtime.execution.environment import InputEdgeGroup, OutputEdge, TaskEnvironment
from flott.runtime.io.network.api import EndOfPartition
from flott.runtime.jobgraph import (
    JobEdge,
    JobVertex,
    OperatorDescriptor,
    PartitionerDescriptor,
    PartitionerKind,
    new_id,
)
from flott.runtime.tasks.stream_task import StreamTask

_WAKE = object()


class QueueInputGate:
    """All channels of one task input, as one bounded queue of (channel, payload)."""

    def __init__(self, num_channels: int, capacity: int = 16) -> None:
        self._num_channels = num_channels
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=capacity)
        self.closed = threading.Event()

    @property
    def num_channels(self) -> int:
        return self._num_channels

    def put(self, channel: int, payload: Any) -> None:
        """Producer side: blocks while the queue is full (backpressure)."""
        while True:
            if self.closed.is_set():
                raise TaskCancelledError("consumer gate closed")
            try:
                self._queue.put((channel, payload), timeout=0.01)
                return
            except queue.Full:
                continue

    def poll(self, timeout: float | None) -> tuple[int, Any] | None:
        if self.closed.is_set():
            raise TaskCancelledError("input gate closed")
        try:
            item = self._queue.get(timeout=timeout) if timeout != 0 else self._queue.get_nowait()
        except queue.Empty:
            return None
        if item is _WAKE or self.closed.is_set():
            raise TaskCancelledError("input gate closed")
        return item  # type: ignore[no-any-return]

    def close(self) -> None:
        self.closed.set()
        try:
            self._queue.put_nowait(_WAKE)
        except queue.Full:
            pass  # a full queue does not block a poll


class GatePartitionWriter:
    """A producer subtask's result partition: subpartition i feeds (gate, channel) targets[i]."""

    def __init__(self, targets: list[tuple[QueueInputGate, int]], serialize: bool = True) -> None:
        self._targets = targets
        self._serialize = serialize
        self.released = threading.Event()
        self.release_cause: str | None = None
        self.finished = False
        self.emits = 0

    @property
    def num_subpartitions(self) -> int:
        return len(self._targets)

    def emit(self, subpartition: int, records: list[Any]) -> None:
        if self.released.is_set():
            raise TaskCancelledError("partition released")
        assert isinstance(records, list) and records, "emit takes a non-empty list"
        payload = pickle.loads(pickle.dumps(records, protocol=5)) if self._serialize else records
        gate, channel = self._targets[subpartition]
        self.emits += 1
        gate.put(channel, payload)

    def broadcast_event(self, event: object) -> None:
        for gate, channel in self._targets:
            gate.put(channel, event)

    def finish(self) -> None:
        self.finished = True
        for gate, channel in self._targets:
            gate.put(channel, EndOfPartition())

    def release(self, cause: str | None = None) -> None:
        self.release_cause = cause
        self.released.set()


class CollectingPartitionWriter:
    """A terminal partition that keeps what was emitted; ``capacity`` buffers, then emit blocks."""

    def __init__(self, num_subpartitions: int, capacity: int | None = None) -> None:
        self._n = num_subpartitions
        self._capacity = capacity
        self.buffers: list[list[list[Any]]] = [[] for _ in range(num_subpartitions)]
        self.emit_times: list[float] = []
        self.finished = False
        self.released = threading.Event()
        self.release_cause: str | None = None
        """The producer's failure the partition was released with (None: cancelled)."""
        self.blocked = threading.Event()
        """Set once an emit waits for room (the writer is full): the task is back-pressured."""
        self._lock = threading.Condition()

    @property
    def num_subpartitions(self) -> int:
        return self._n

    def records(self, subpartition: int | None = None) -> list[Any]:
        with self._lock:
            parts = self.buffers if subpartition is None else [self.buffers[subpartition]]
            return [r for part in parts for buf in part for r in buf]

    def emit(self, subpartition: int, records: list[Any]) -> None:
        with self._lock:
            while self._capacity is not None and sum(map(len, self.buffers)) >= self._capacity:
                if self.released.is_set():
                    raise TaskCancelledError("partition released")
                self.blocked.set()
                self._lock.wait(0.01)
            if self.released.is_set():
                raise TaskCancelledError("partition released")
            self.buffers[subpartition].append(pickle.loads(pickle.dumps(records, protocol=5)))
            self.emit_times.append(time.monotonic())

    def broadcast_event(self, event: object) -> None:
        pass

    def finish(self) -> None:
        self.finished = True

    def release(self, cause: str | None = None) -> None:
        self.release_cause = cause
        self.released.set()
        with self._lock:
            self._lock.notify_all()


# --- sources and sinks -------------------------------------------------------------------------


class CollectionReader:
    def __init__(self, elements: list[Any], delay_s: float = 0.0) -> None:
        self._elements = elements
        self._pos = 0
        self._delay_s = delay_s
        self.closed = False

    def poll_batch(self, max_records: int) -> list[Any] | None:
        if self._pos >= len(self._elements):
            return None
        if self._delay_s:
            time.sleep(self._delay_s)
        batch = self._elements[self._pos : self._pos + max_records]
        self._pos += len(batch)
        return batch

    def close(self) -> None:
        self.closed = True


class CollectionSource:
    """Bounded; subtask i of n reads elements[i::n]."""

    def __init__(self, elements: Iterable[Any], delay_s: float = 0.0) -> None:
        self.elements = list(elements)
        self.delay_s = delay_s

    def get_boundedness(self) -> Boundedness:
        return Boundedness.BOUNDED

    def create_reader(self, subtask_index: int, parallelism: int) -> CollectionReader:
        return CollectionReader(self.elements[subtask_index::parallelism], self.delay_s)


class TrickleReader:
    """Hands out ``records`` once, then nothing forever (``[]``), like an idle unbounded source."""

    def __init__(self, records: list[Any], endless_counter: bool) -> None:
        self._records = records
        self._endless = endless_counter
        self._n = 0

    def poll_batch(self, max_records: int) -> list[Any] | None:
        if self._endless:
            batch = list(range(self._n, self._n + max_records))
            self._n += max_records
            return batch
        if self._records:
            batch, self._records = self._records, []
            return batch
        time.sleep(0.005)
        return []

    def close(self) -> None:
        pass


class UnboundedSource:
    """``records`` once then idle forever; or (endless=True) integers as fast as possible."""

    def __init__(self, records: list[Any] | None = None, endless: bool = False) -> None:
        self.records = records or []
        self.endless = endless

    def get_boundedness(self) -> Boundedness:
        return Boundedness.CONTINUOUS_UNBOUNDED

    def create_reader(self, subtask_index: int, parallelism: int) -> TrickleReader:
        return TrickleReader(list(self.records), self.endless)


_SINK_RESULTS: dict[str, dict[int, list[Any]]] = {}
_SINK_EVENTS: dict[str, list[str]] = {}
_SINK_LOCK = threading.Lock()


class CollectSink:
    """Keeps every record written, per subtask, plus the writer lifecycle calls.

    Tasks get their own unpickled copy of the sink (as on a TaskExecutor), so the
    results live in a module-level registry under the sink's id.
    """

    def __init__(self) -> None:
        self.sink_id = new_id()
        with _SINK_LOCK:
            _SINK_RESULTS[self.sink_id] = {}
            _SINK_EVENTS[self.sink_id] = []

    @property
    def results(self) -> dict[int, list[Any]]:
        with _SINK_LOCK:
            return {k: list(v) for k, v in _SINK_RESULTS[self.sink_id].items()}

    @property
    def events(self) -> list[str]:
        with _SINK_LOCK:
            return list(_SINK_EVENTS[self.sink_id])

    def create_writer(self, subtask_index: int, parallelism: int, input_type: object | None) -> CollectWriter:
        with _SINK_LOCK:
            _SINK_RESULTS[self.sink_id][subtask_index] = []
        return CollectWriter(self.sink_id, subtask_index)

    def all(self) -> list[Any]:
        return [r for part in self.results.values() for r in part]


class CollectWriter:
    def __init__(self, sink_id: str, subtask_index: int) -> None:
        self._sink_id = sink_id
        self._subtask = subtask_index

    def write_batch(self, records: list[Any]) -> None:
        with _SINK_LOCK:
            _SINK_RESULTS[self._sink_id][self._subtask].extend(records)

    def flush(self, end_of_input: bool) -> None:
        with _SINK_LOCK:
            _SINK_EVENTS[self._sink_id].append(f"flush({end_of_input})@{self._subtask}")

    def close(self) -> None:
        with _SINK_LOCK:
            _SINK_EVENTS[self._sink_id].append(f"close@{self._subtask}")


# --- job building ------------------------------------------------------------------------------


class Blobs:
    """Stands in for the job's artifacts: user objects cloudpickled under an id.

    Like the TaskExecutor's loader, :meth:`loader` gives each task its own
    cache of unpickled objects, so subtasks never share a user object.
    """

    def __init__(self) -> None:
        self._artifacts: dict[str, bytes] = {}

    def add(self, obj: Any) -> str:
        blob_id = new_id()
        self._artifacts[blob_id] = cloudpickle.dumps(obj)
        return blob_id

    def loader(self) -> Callable[[str], Any]:
        cache: dict[str, Any] = {}

        def load(blob_id: str) -> Any:
            if blob_id not in cache:
                cache[blob_id] = cloudpickle.loads(self._artifacts[blob_id])
            return cache[blob_id]

        return load


def op(
    blobs: Blobs,
    kind: str,
    function: Any = None,
    *,
    key: Any = None,
    name: str | None = None,
    config: dict[str, Any] | None = None,
) -> OperatorDescriptor:
    return OperatorDescriptor(
        operator_id=new_id(),
        name=name or kind,
        kind=kind,
        function=None if function is None else blobs.add(function),
        key_selector=None if key is None else blobs.add(key),
        config=config or {},
    )


def vertex(
    name: str, parallelism: int, *operators: OperatorDescriptor, max_parallelism: int = 128
) -> JobVertex:
    return JobVertex(
        id=new_id(),
        name=name,
        parallelism=parallelism,
        max_parallelism=max_parallelism,
        operators=list(operators),
    )


def edge(
    blobs: Blobs,
    source: JobVertex,
    target: JobVertex,
    kind: PartitionerKind = "forward",
    key: Any = None,
    target_input: int = 0,
) -> JobEdge:
    return JobEdge(
        id=new_id(),
        source=source.id,
        target=target.id,
        partitioner=PartitionerDescriptor(kind=kind, key_selector=None if key is None else blobs.add(key)),
        target_input=target_input,
    )


def make_env(
    v: JobVertex,
    blobs: Blobs,
    *,
    subtask: int = 0,
    config: dict[str, str] | None = None,
    inputs: list[InputEdgeGroup] | None = None,
    outputs: list[OutputEdge] | None = None,
) -> TaskEnvironment:
    return TaskEnvironment(
        job_id=new_id(),
        job_name="test-job",
        vertex=v,
        subtask_index=subtask,
        attempt_number=0,
        job_config=dict(config or {}),
        inputs=inputs or [],
        outputs=outputs or [],
        load_user_object=blobs.loader(),
    )


class TaskThread:
    """Runs ``StreamTask.invoke`` on its own thread and keeps the outcome."""

    def __init__(self, env: TaskEnvironment) -> None:
        self.env = env
        self.task = StreamTask(env)
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, name=env.task_name_with_subtasks, daemon=True)

    def _run(self) -> None:
        try:
            self.task.invoke()
        except BaseException as e:
            self.error = e
        finally:
            self.done.set()

    def start(self) -> TaskThread:
        self.thread.start()
        return self

    def join(self, timeout: float = 30.0) -> None:
        if not self.done.wait(timeout):
            raise AssertionError(f"task {self.env.task_name_with_subtasks} did not end within {timeout}s")


@dataclass
class JobRun:
    tasks: dict[str, list[TaskThread]]
    """Vertex name -> its subtasks."""

    def all_tasks(self) -> Iterator[TaskThread]:
        for subtasks in self.tasks.values():
            yield from subtasks

    def join(self, timeout: float = 30.0) -> None:
        for t in self.all_tasks():
            t.join(timeout)

    def errors(self) -> list[BaseException]:
        return [t.error for t in self.all_tasks() if t.error is not None]

    def raise_first(self) -> None:
        errors = self.errors()
        if errors:
            raise errors[0]


def run_job(
    vertices: list[JobVertex],
    edges: list[JobEdge],
    blobs: Blobs,
    config: dict[str, str] | None = None,
    *,
    gate_capacity: int = 16,
    extra_outputs: Callable[[JobVertex, int], list[OutputEdge]] | None = None,
) -> JobRun:
    """Wire every subtask of every vertex to in-memory gates and start them all on threads.

    Each input of a vertex (``JobEdge.target_input``: 0, or 1 for two-input operators)
    gets a gate of its own per subtask, as on a TaskExecutor.
    """
    gates: dict[tuple[str, int, int], QueueInputGate] = {}
    channel_offset: dict[tuple[str, str], int] = {}
    for v in vertices:
        incoming = [e for e in edges if e.target == v.id]
        for input_index in sorted({e.target_input for e in incoming}):
            offset = 0
            for e in (e for e in incoming if e.target_input == input_index):
                channel_offset[(e.id, v.id)] = offset
                offset += next(x for x in vertices if x.id == e.source).parallelism
            for j in range(v.parallelism):
                gates[(v.id, j, input_index)] = QueueInputGate(offset, gate_capacity)
    tasks: dict[str, list[TaskThread]] = {}
    for v in vertices:
        subtasks = []
        for i in range(v.parallelism):
            incoming = [e for e in edges if e.target == v.id]
            inputs = [
                InputEdgeGroup(n, [e for e in incoming if e.target_input == n], gates[(v.id, i, n)])
                for n in sorted({e.target_input for e in incoming})
            ]
            outputs = []
            for e in (e for e in edges if e.source == v.id):
                target = next(x for x in vertices if x.id == e.target)
                offset = channel_offset[(e.id, target.id)]
                targets = [
                    (gates[(target.id, j, e.target_input)], offset + i) for j in range(target.parallelism)
                ]
                outputs.append(OutputEdge(e, GatePartitionWriter(targets)))
            if extra_outputs is not None:
                outputs.extend(extra_outputs(v, i))
            env = make_env(v, blobs, subtask=i, config=config, inputs=inputs, outputs=outputs)
            subtasks.append(TaskThread(env))
        tasks[v.name] = subtasks
    run = JobRun(tasks)
    for t in run.all_tasks():
        t.start()
    return run
