"""The collect sink on the TaskExecutor (Flink's CollectSinkFunction and CollectSinkOperator).

It keeps a bounded buffer of pickled results; the client's requests (through
the JobMaster) acknowledge what it holds and fetch the next batch. A full
buffer blocks ``write_batch``, so a slow client backpressures the job instead
of filling memory anywhere. Requests are answered on the TaskExecutor's event
loop thread under a short lock; only the task's thread ever waits.

Checkpoints (through the runtime's two-phase sink SPI, see
:mod:`flott.datastream.connectors.base`): ``prepare_commit`` puts the
unacknowledged results and their offsets into the checkpoint;
``Sink.commit`` of a completed checkpoint advances
``last_checkpointed_offset``, which tells the client what survives a
restart; after a restore the sink starts from the checkpointed buffer under
a new version.
"""

from __future__ import annotations

import pickle
import threading
import uuid
from collections import deque
from typing import TYPE_CHECKING, Any

import cloudpickle

from flott.runtime.operators.collect.protocol import (
    CollectCoordinationResponse,
    decode_request,
    encode,
)

if TYPE_CHECKING:
    from flott.runtime.execution.environment import TaskEnvironment

BATCH_SIZE_MAX_KEY = "collect-sink.batch-size.max"
DEFAULT_BATCH_SIZE_MAX = 2 * 1024 * 1024
"""Flink's default: the sink buffers (and a response carries) at most about 2 MiB of results."""

SINK_NAME = "Data stream collect sink"

Committable = tuple[int, int, int, list[bytes]]
"""(checkpoint id, offset of the first buffered result, end offset, the buffered results)."""


def serialize_record(record: Any) -> bytes:
    """A result as the client unpickles it; records of classes shipped by value need cloudpickle."""
    try:
        return pickle.dumps(record, protocol=5)
    except (pickle.PicklingError, AttributeError, TypeError):
        return cloudpickle.dumps(record, protocol=5)


class CollectSink:
    """The Sink object in the JobGraph; one writer (the sink runs with parallelism 1)."""

    def __init__(self, accumulator_name: str, max_bytes: int = DEFAULT_BATCH_SIZE_MAX) -> None:
        self.accumulator_name = accumulator_name
        self.max_bytes = max_bytes
        self._restored: Committable | None = None
        self._writer: CollectSinkWriter | None = None

    def create_writer(
        self, subtask_index: int, parallelism: int, input_type: object | None
    ) -> CollectSinkWriter:
        restored, self._restored = self._restored, None
        if restored is None:
            writer = CollectSinkWriter(self, 0, [], 0)
        else:
            _cid, start, end, results = restored
            writer = CollectSinkWriter(self, start, results, end)
        self._writer = writer
        return writer

    def commit(self, committables: list[Any]) -> None:
        """A checkpoint completed (or, before ``create_writer``, the restored checkpoint's state)."""
        if not committables:
            return
        latest: Committable = max(committables, key=lambda c: c[0])
        if self._writer is None:
            self._restored = latest
        else:
            self._writer.checkpoint_committed(max(c[2] for c in committables))


class CollectSinkWriter:
    def __init__(self, sink: CollectSink, offset: int, results: list[bytes], checkpointed: int) -> None:
        self._accumulator_name = sink.accumulator_name
        self._max_bytes = max(1, sink.max_bytes)
        self._cond = threading.Condition()
        self._buffer: deque[bytes] = deque(results)
        self._offset = offset
        """Offset of ``_buffer[0]``: every result before it was acknowledged by the client."""
        self._bytes = sum(map(len, results))
        self._checkpointed = checkpointed
        self.version = uuid.uuid4().hex
        self._env: TaskEnvironment | None = None
        self._operator_id = ""
        self._closed = False

    # -- runtime hooks -------------------------------------------------------------------------

    def bind_task(self, env: TaskEnvironment, operator_id: str) -> None:
        """Called by the sink operator after ``create_writer``: become reachable for the client."""
        self._env = env
        self._operator_id = operator_id
        env.coordination_handlers[operator_id] = self.handle_coordination_request

    def set_transactional(self, enabled: bool = True) -> None:
        """Checkpointing is on: results become final when a checkpoint covering them completes."""

    # -- data path (task thread) ---------------------------------------------------------------

    def write_batch(self, records: list[Any]) -> None:
        items = [serialize_record(r) for r in records]
        size = sum(map(len, items))
        cancelled = self._env.cancelled if self._env is not None else None
        with self._cond:
            self._buffer.extend(items)
            self._bytes += size
            while self._bytes > self._max_bytes and not self._closed:
                if cancelled is not None and cancelled.is_set():
                    return
                self._cond.wait(0.1)

    def prepare_commit(self, checkpoint_id: int) -> list[Committable]:
        with self._cond:
            end = self._offset + len(self._buffer)
            return [(checkpoint_id, self._offset, end, list(self._buffer))]

    def checkpoint_committed(self, end_offset: int) -> None:
        with self._cond:
            self._checkpointed = max(self._checkpointed, end_offset)

    def flush(self, end_of_input: bool) -> None:
        """At end of input: the unacknowledged results leave with the task as an accumulator."""
        if not end_of_input or self._env is None:
            return
        with self._cond:
            end = self._offset + len(self._buffer)
            self._checkpointed = end
            final = CollectCoordinationResponse(self.version, end, self._offset, list(self._buffer))
        self._env.accumulators[self._accumulator_name] = encode(final)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        env = self._env
        if env is not None:
            handlers = env.coordination_handlers
            if handlers.get(self._operator_id) == self.handle_coordination_request:
                del handlers[self._operator_id]

    # -- the client's requests (TaskExecutor's event loop thread: never blocks) ---------------

    def handle_coordination_request(self, data: bytes) -> bytes:
        request = decode_request(data)
        with self._cond:
            results: list[bytes] = []
            if request.version == self.version:
                acked = min(max(0, request.offset - self._offset), len(self._buffer))
                if acked:
                    popleft = self._buffer.popleft
                    for _ in range(acked):
                        self._bytes -= len(popleft())
                    self._offset += acked
                    self._cond.notify_all()
                budget = self._max_bytes
                for item in self._buffer:
                    if results and budget - len(item) < 0:
                        break
                    results.append(item)
                    budget -= len(item)
            response = CollectCoordinationResponse(self.version, self._checkpointed, self._offset, results)
        return encode(response)
