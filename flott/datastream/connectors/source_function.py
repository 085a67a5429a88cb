"""``SourceFunction``/``SinkFunction`` for user code, and adapters onto the Source/Sink contract.

PyFlink only offers Java-backed source/sink functions; flott lets users write
them in Python: a ``SourceFunction`` implements ``run(ctx)`` (calling
``ctx.collect(x)``) and ``cancel()``, a ``SinkFunction`` implements
``invoke(value, context)``. ``env.add_source(fn)`` / ``ds.add_sink(fn)`` wrap them
with :func:`source_from_source_function` / :func:`sink_from_sink_function`.

The source adapter runs ``run(ctx)`` on a helper thread. ``collect`` appends to
a ``collections.deque`` (atomic under the GIL, so no lock per record) and only
blocks when the deque holds ``capacity`` records (backpressure); ``poll_batch``
drains it from the task thread.
"""

from __future__ import annotations

import collections
import threading
import time
from typing import Any

from flott.datastream.connectors.base import Boundedness, Sink, SinkWriter, Source, SourceReader

__all__ = [
    "ParallelSourceFunction",
    "SinkFunction",
    "SinkFunctionSink",
    "SourceFunction",
    "SourceFunctionSource",
    "sink_from_sink_function",
    "source_from_source_function",
]

_MAX_WAIT_S = 0.05
_DEFAULT_CAPACITY = 8192


class SourceContext:
    """What ``SourceFunction.run`` emits through (Flink's ``SourceFunction.SourceContext``)."""

    def collect(self, element: Any) -> None:
        raise NotImplementedError

    def collect_with_timestamp(self, element: Any, timestamp: int) -> None:
        raise NotImplementedError

    def emit_watermark(self, watermark: Any) -> None:
        raise NotImplementedError

    def mark_as_temporarily_idle(self) -> None:
        raise NotImplementedError

    def get_checkpoint_lock(self) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class SourceFunction:
    """A user-defined source: ``run(ctx)`` emits records until done or until ``cancel()``.

    ``run`` executes on its own thread; ``cancel`` is called from the task thread,
    so it should only flip a flag that ``run`` checks."""

    def run(self, ctx: SourceContext) -> None:
        raise NotImplementedError

    def cancel(self) -> None:
        """Ask ``run`` to return soon."""


class ParallelSourceFunction(SourceFunction):
    """A SourceFunction that runs in every parallel subtask (each instance emits its own share)."""


class SinkFunction:
    """A user-defined sink: ``invoke(value, context)`` is called for each record."""

    def invoke(self, value: Any, context: Any) -> None:
        raise NotImplementedError


class _SourceCancelled(BaseException):
    """Raised inside ``collect`` after cancellation so a ``run`` loop blocked on backpressure ends.

    A BaseException so that ``except Exception`` in user code does not swallow it."""


class _QueueContext(SourceContext):
    def __init__(self, capacity: int) -> None:
        self._queue: collections.deque[Any] = collections.deque()
        self._capacity = capacity
        self._data = threading.Event()
        self._space = threading.Event()
        self._lock = threading.RLock()
        self.cancelled = False
        self.timestamps_dropped = 0

    def collect(self, element: Any) -> None:
        q = self._queue
        q.append(element)
        n = len(q)
        if n == 1:
            self._data.set()
        elif n >= self._capacity:
            self._wait_for_space()

    def _wait_for_space(self) -> None:
        q = self._queue
        while len(q) >= self._capacity:
            if self.cancelled:
                raise _SourceCancelled()
            self._space.clear()
            if len(q) >= self._capacity:
                self._space.wait(_MAX_WAIT_S)

    def collect_with_timestamp(self, element: Any, timestamp: int) -> None:
        # Record timestamps are not carried yet (event time comes later): emit the element.
        self.timestamps_dropped += 1
        self.collect(element)

    def emit_watermark(self, watermark: Any) -> None:
        """Watermarks from SourceFunctions are ignored until the event-time runtime exists."""

    def mark_as_temporarily_idle(self) -> None:
        """Idleness is ignored until the event-time runtime exists."""

    def get_checkpoint_lock(self) -> Any:
        return self._lock

    def close(self) -> None:
        pass

    # task-thread side -----------------------------------------------------------------

    def drain(self, max_records: int) -> list[Any]:
        q = self._queue
        n = min(max_records, len(q))
        if n == 0:
            return []
        pop = q.popleft
        out = [pop() for _ in range(n)]
        self._space.set()
        return out

    def wait_for_data(self, timeout: float) -> None:
        self._data.clear()
        if not self._queue:
            self._data.wait(timeout)

    def wake(self) -> None:
        self._data.set()
        self._space.set()

    def empty(self) -> bool:
        return not self._queue


class _SourceFunctionReader:
    def __init__(self, fn: SourceFunction, capacity: int) -> None:
        self._fn = fn
        self._ctx = _QueueContext(capacity)
        self._error: BaseException | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"source-fn-{type(fn).__name__}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._fn.run(self._ctx)
        except _SourceCancelled:
            pass
        except BaseException as e:
            self._error = e
        finally:
            self._done.set()
            self._ctx.wake()

    def poll_batch(self, max_records: int) -> list[Any] | None:
        ctx = self._ctx
        batch = ctx.drain(max_records)
        if batch:
            return batch
        if self._done.is_set():
            batch = ctx.drain(max_records)  # records collected just before run() returned
            if batch:
                return batch
            if self._error is not None:
                error, self._error = self._error, None
                raise error
            return None
        ctx.wait_for_data(_MAX_WAIT_S)
        return ctx.drain(max_records)

    def close(self) -> None:
        if not self._done.is_set():
            self._ctx.cancelled = True
            try:
                self._fn.cancel()
            finally:
                self._ctx.wake()
                self._thread.join(timeout=5.0)


class SourceFunctionSource(Source):
    """Adapts a :class:`SourceFunction` onto the Source contract (see module docstring).

    Non-parallel unless the function is a :class:`ParallelSourceFunction`; a
    non-parallel function deployed with parallelism > 1 runs in subtask 0 only."""

    def __init__(self, source_function: SourceFunction, capacity: int = _DEFAULT_CAPACITY) -> None:
        if not callable(getattr(source_function, "run", None)):
            raise TypeError(f"{type(source_function).__name__} is not a SourceFunction (no run(ctx))")
        self._fn = source_function
        self._capacity = capacity

    @property
    def source_function(self) -> SourceFunction:
        return self._fn

    def is_parallel(self) -> bool:
        return isinstance(self._fn, ParallelSourceFunction)

    def get_boundedness(self) -> Boundedness:
        # Flink treats legacy SourceFunctions as unbounded; the reader still ends when run() returns.
        return Boundedness.CONTINUOUS_UNBOUNDED

    def get_max_parallelism(self) -> int | None:
        return None if self.is_parallel() else 1

    def create_reader(self, subtask_index: int, parallelism: int) -> SourceReader:
        if subtask_index > 0 and not self.is_parallel():
            return _EmptyReader()
        return _SourceFunctionReader(self._fn, self._capacity)


class _EmptyReader:
    def poll_batch(self, max_records: int) -> list[Any] | None:
        return None

    def close(self) -> None:
        pass


class SinkContext:
    """The context passed to ``SinkFunction.invoke`` (Flink's ``SinkFunction.Context``)."""

    __slots__ = ("_timestamp", "_watermark")

    def __init__(self) -> None:
        self._watermark = -(2**63)
        self._timestamp: int | None = None

    def current_processing_time(self) -> int:
        return time.time_ns() // 1_000_000

    def current_watermark(self) -> int:
        return self._watermark

    def timestamp(self) -> int | None:
        """The record's event timestamp, or None (records carry no timestamps yet)."""
        return self._timestamp


class _SinkFunctionWriter:
    def __init__(self, fn: SinkFunction) -> None:
        self._invoke = fn.invoke
        self._fn = fn
        self._context = SinkContext()

    def write_batch(self, records: list[Any]) -> None:
        invoke = self._invoke
        context = self._context
        for r in records:
            invoke(r, context)

    def flush(self, end_of_input: bool) -> None:
        finish = getattr(self._fn, "finish", None)
        if end_of_input and callable(finish):
            finish()

    def close(self) -> None:
        pass


class SinkFunctionSink(Sink):
    """Adapts a :class:`SinkFunction` (anything with ``invoke(value, context)``) onto Sink."""

    def __init__(self, sink_function: SinkFunction) -> None:
        if not callable(getattr(sink_function, "invoke", None)):
            raise TypeError(f"{type(sink_function).__name__} is not a SinkFunction (no invoke())")
        self._fn = sink_function

    @property
    def sink_function(self) -> SinkFunction:
        return self._fn

    def create_writer(self, subtask_index: int, parallelism: int, input_type: object | None) -> SinkWriter:
        return _SinkFunctionWriter(self._fn)


def source_from_source_function(source_func: Any) -> tuple[Source, bool]:
    """``env.add_source(fn)``: the Source to deploy and whether it must run non-parallel.

    Objects that already implement the Source contract are used as they are."""
    if callable(getattr(source_func, "create_reader", None)) and callable(
        getattr(source_func, "get_boundedness", None)
    ):
        from flott.datastream.connectors.base import get_source_max_parallelism

        return source_func, get_source_max_parallelism(source_func) == 1
    source = SourceFunctionSource(source_func)
    return source, not source.is_parallel()


def sink_from_sink_function(sink_func: Any) -> Sink:
    """``ds.add_sink(fn)``: the Sink to deploy; objects implementing Sink are used as they are."""
    if callable(getattr(sink_func, "create_writer", None)):
        return sink_func  # type: ignore[no-any-return]
    return SinkFunctionSink(sink_func)
