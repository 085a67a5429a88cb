"""Async I/O: ``AsyncDataStream.ordered_wait`` / ``unordered_wait`` (Flink's AsyncWaitOperator).

Two threads share the work, and neither blocks the TaskExecutor's own loop
(heartbeats, data exchange):

* the **task thread** runs the operator as any other: it puts each record into
  the :mod:`~flott.runtime.operators.stream_element_queue` (ordered or
  unordered), hands the new records to the runner a batch at a time, and
  emits what the queue lets out. A full queue (``capacity`` elements in flight)
  blocks the task thread until something completes: that is backpressure, as
  in Flink. ``timeout()`` and result checks run here, so user errors fail the
  task through its one failure path;
* the **runner thread** owns an asyncio loop on which every record's
  ``async_invoke`` coroutine runs, with its timeout and retries; each outcome
  goes back through a thread-safe queue (at most ``capacity`` entries).

Completions are picked up whenever the task thread is in the operator (every
batch, watermark, checkpoint, end of input). When the input is idle, a
processing-time callback polls for them: 1 ms after the last activity, backing
off to 32 ms while nothing completes, so an idle task wakes at most a few
hundred times a second and only while records are in flight.

Checkpoints store the elements still in the queue (inputs, not results, as
Flink does): records not yet emitted when the barrier passed. On restore they
are issued again before new input, so across a failure no record is lost and
none is emitted twice downstream of a transactional sink.

Outputs keep their input record's timestamp (event-time paths).
"""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
import queue
import threading
from collections.abc import Callable, Iterable
from typing import Any

import cloudpickle

from flott.api.streaming.functions import AsyncFunction, AsyncFunctionDescriptor
from flott.errors import ClusterError, InvalidJobGraphError, TaskCancelledError
from flott.runtime.checkpoint.metadata import SPLIT_DISTRIBUTE
from flott.runtime.operators.processing_time import ScheduledCallback
from flott.runtime.operators.stream_element_queue import (
    OrderedStreamElementQueue,
    RecordEntry,
    StreamElementQueue,
    UnorderedStreamElementQueue,
    WatermarkEntry,
)
from flott.runtime.operators.stream_operator import (
    OperatorSetup,
    StreamOperator,
    close_user_function,
    open_user_function,
)
from flott.runtime.operators.watermark import LONG_MAX, WatermarkStatus

log = logging.getLogger(__name__)

ASYNC_STATE = "_async_wait_operator_state_"
"""Operator list state of the in-flight elements (Flink's AsyncWaitOperator state name)."""

RESULT = 0
FAILED = 1
TIMED_OUT = 2

Outcome = tuple[RecordEntry, int, Any]
"""(entry, RESULT/FAILED/TIMED_OUT, the result list or the exception)."""

_WAIT_S = 0.05
"""A task thread waiting for a completion looks at its cancel flag this often."""
_POLL_MIN_MS = 1
_POLL_MAX_MS = 32
_STOP_TIMEOUT_S = 5.0


class AsyncFunctionRunner:
    """An asyncio loop on its own thread, running each record's attempts of ``async_invoke``.

    Per record: attempts as the retry strategy allows (PyFlink's semantics:
    attempt *n* is followed by another if its result or exception satisfies the
    strategy's predicate and ``can_retry(n)``, after ``get_backoff_time_millis(n)``),
    all within one overall timeout (if > 0). On timeout the coroutine is
    cancelled; the task thread then calls the function's ``timeout()``. (PyFlink
    lets a timed-out coroutine run on and ignores its answer; cancelling frees
    what it holds, a connection say, and is what asyncio code expects.)
    """

    def __init__(
        self,
        invoke: Callable[[Any], Any],
        timeout_s: float,
        retry_strategy: Any,
        completions: queue.SimpleQueue[Outcome],
        name: str,
    ) -> None:
        self._invoke = invoke
        self._timeout_s = timeout_s
        self._strategy = retry_strategy
        predicate = retry_strategy.get_retry_predicate()
        self._result_predicate = predicate.result_predicate()
        self._exception_predicate = predicate.exception_predicate()
        self._retry_enabled = self._result_predicate is not None or self._exception_predicate is not None
        self._completions = completions
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._deadlines: collections.deque[tuple[float, asyncio.Task[None]]] = collections.deque()
        """(deadline, task) of elements with a timeout, in submission (so deadline) order."""
        self._expiry: asyncio.TimerHandle | None = None
        self._timed_out: set[asyncio.Task[Any]] = set()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"async-io {self._name}", daemon=True)
        self._thread.start()
        self._ready.wait()

    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def submit(self, items: list[tuple[RecordEntry, Any]]) -> None:
        """Start the coroutines of ``items`` (entry, value): one wake-up of the loop per batch."""
        loop = self._loop
        if loop is None or loop.is_closed():
            raise ClusterError(f"async operator '{self._name}': its asyncio loop is not running")
        loop.call_soon_threadsafe(self._start_all, items)

    def stop(self) -> None:
        """Cancel what is in flight, stop the loop and wait for its thread (bounded)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if not loop.is_closed():
            try:
                loop.call_soon_threadsafe(loop.stop)
            except RuntimeError:  # closed meanwhile
                pass
        thread.join(_STOP_TIMEOUT_S)
        if thread.is_alive():
            log.warning("async operator '%s': its asyncio thread did not stop in time", self._name)

    # --- on the loop's thread ---------------------------------------------------------------

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        self._ready.set()
        try:
            loop.run_forever()
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.wait(pending, timeout=_STOP_TIMEOUT_S))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()

    def _start_all(self, items: list[tuple[RecordEntry, Any]]) -> None:
        loop = self._loop
        assert loop is not None
        create_task = loop.create_task
        element = self._element
        if self._timeout_s <= 0:
            for entry, value in items:
                create_task(element(entry, value))
            return
        # One timeout for all: deadlines grow in submission order, so a deque and one timer
        # replace a timer per element (asyncio.timeout per element halved the throughput).
        deadline = loop.time() + self._timeout_s
        deadlines = self._deadlines
        while deadlines and deadlines[0][1].done():
            deadlines.popleft()  # answered in time: forget them now, not at their deadline
        for entry, value in items:
            deadlines.append((deadline, create_task(element(entry, value))))
        if self._expiry is None:
            self._expiry = loop.call_at(deadlines[0][0], self._expire)

    def _expire(self) -> None:
        """Cancel the elements whose deadline passed; re-arm for the next pending one."""
        loop = self._loop
        assert loop is not None
        self._expiry = None
        deadlines = self._deadlines
        now = loop.time()
        while deadlines:
            deadline, task = deadlines[0]
            if task.done():
                deadlines.popleft()
            elif deadline <= now:
                deadlines.popleft()
                self._timed_out.add(task)
                task.cancel()
            else:
                self._expiry = loop.call_at(deadline, self._expire)
                break

    async def _element(self, entry: RecordEntry, value: Any) -> None:
        try:
            kind, payload = await self._attempts(value)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task not in self._timed_out:
                raise  # the runner is stopping
            self._timed_out.discard(task)
            kind, payload = TIMED_OUT, None
        if self._timed_out:  # a coroutine that swallowed its cancellation answered after all
            self._timed_out.discard(asyncio.current_task())  # type: ignore[arg-type]
        self._completions.put((entry, kind, payload))

    async def _attempts(self, value: Any) -> tuple[int, Any]:
        attempt = 1
        while True:
            result: Any = None
            error: BaseException | None = None
            try:
                result = await self._invoke(value)
            except asyncio.CancelledError:
                raise
            except BaseException as e:  # anything the user's coroutine raised fails the record
                error = e
            if self._retry_enabled:
                try:
                    again = self._should_retry(result, error, attempt)
                except Exception as e:  # a failing predicate or strategy is a user error too
                    return FAILED, e
                if again:
                    await asyncio.sleep(self._strategy.get_backoff_time_millis(attempt) / 1000)
                    attempt += 1
                    continue
            return (RESULT, result) if error is None else (FAILED, error)

    def _should_retry(self, result: Any, error: BaseException | None, attempt: int) -> bool:
        if error is None:
            satisfied = self._result_predicate is not None and bool(self._result_predicate(result))
        else:
            satisfied = self._exception_predicate is not None and bool(self._exception_predicate(error))
        return satisfied and bool(self._strategy.can_retry(attempt))


class AsyncWaitOperator(StreamOperator):
    """Up to ``capacity`` records in flight through a user AsyncFunction; see the module docstring."""

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._setup = setup
        descriptor = setup.load_function(setup.descriptor.function, "async function")
        if not isinstance(descriptor, AsyncFunctionDescriptor):
            raise InvalidJobGraphError(
                f"async wait operator '{self.name}': expected an AsyncFunctionDescriptor, "
                f"got {type(descriptor).__name__}"
            )
        self._function = descriptor.async_function
        self._class_name = str(type(self._function))
        timeout_method = getattr(self._function, "timeout", None)
        if not callable(timeout_method):  # duck-typed: PyFlink's default timeout()
            timeout_method = functools.partial(AsyncFunction.timeout, self._function)
        self._timeout_call: Callable[[Any], Any] = timeout_method
        timeout_ms = int(descriptor.timeout.to_milliseconds())
        self._timeout_s = timeout_ms / 1000 if timeout_ms > 0 else 0.0
        self._retry_strategy = descriptor.async_retry_strategy
        ordered = descriptor.output_mode == AsyncFunctionDescriptor.OutputMode.ORDERED
        queue_class = OrderedStreamElementQueue if ordered else UnorderedStreamElementQueue
        self.queue: StreamElementQueue = queue_class(descriptor.capacity)
        self._timestamped = setup.timestamped_input
        self._completions: queue.SimpleQueue[Outcome] = queue.SimpleQueue()
        self._runner: AsyncFunctionRunner | None = None
        self._to_submit: list[tuple[RecordEntry, Any]] = []
        self._out: list[Any] = []
        """Outputs let out by the queue, not yet handed on (returned by process_batch or collected)."""
        self._cancelled = setup.env.cancelled
        self._pts = setup.processing_time_service
        self._poll_timer: ScheduledCallback | None = None
        self._poll_interval_ms = _POLL_MIN_MS

    # --- lifecycle ----------------------------------------------------------------------------

    def open(self) -> None:
        open_user_function(self._function, self._setup.runtime_context(None))
        self._runner = AsyncFunctionRunner(
            self._function.async_invoke,
            self._timeout_s,
            self._retry_strategy,
            self._completions,
            self.name,
        )
        self._runner.start()
        restored = self._setup.restored_operator_state(ASYNC_STATE)
        if restored:
            # In flight at the checkpoint: issued again before any new input, in their order.
            for blob in restored:
                kind, *fields = cloudpickle.loads(blob)
                if kind == "w":
                    self.process_watermark(fields[0])
                else:
                    self._add(fields[0], fields[1])
            self._submit()
            self._hand_on()
            self._ensure_poll_timer()

    def close(self) -> None:
        if self._poll_timer is not None:
            self._poll_timer.cancel()
            self._poll_timer = None
        runner, self._runner = self._runner, None
        try:
            if runner is not None:
                runner.stop()
        finally:
            close_user_function(self._function)

    # --- records and event time ---------------------------------------------------------------

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        self._take_completions()
        add = self._add
        if self._timestamped:
            for value, timestamp in batch:
                add(value, timestamp)
        else:
            for value in batch:
                add(value, None)
        self._submit()
        self._take_completions()
        self._ensure_poll_timer()
        out, self._out = self._out, []
        return out

    def process_watermark(self, timestamp: int) -> None:
        self.current_watermark = timestamp
        self._take_completions()
        while not self.queue.try_put_watermark(timestamp):
            self._submit()
            self._wait_for_completion()
        self._release()
        self._hand_on()
        self._ensure_poll_timer()

    def process_watermark_status(self, status: WatermarkStatus) -> None:
        self.output.emit_watermark_status(status)

    def end_input(self) -> list[Any]:
        """Every record in flight completes (or times out) before the input counts as ended."""
        self._submit()
        self._take_completions()
        while not self.queue.is_empty():
            self._wait_for_completion()
        out, self._out = self._out, []
        return out

    # --- checkpoints --------------------------------------------------------------------------

    def snapshot_operator_state(self, checkpoint_id: int) -> dict[str, tuple[str, list[Any]]]:
        """The elements not yet emitted (in flight or waiting for their turn), in input order.

        After the final watermark (the input ended, or a stop-with-savepoint drains) nothing
        more comes in: the operator finishes what is in flight first, emitting it ahead of
        the barrier, so a final checkpoint or drained savepoint holds no in-flight elements
        (Flink finishes operators before such a snapshot).
        """
        if self.current_watermark >= LONG_MAX and not self.queue.is_empty():
            self._hand_on()
            self.output.collect(self.end_input())
        elements: list[bytes] = []
        for entry in self.queue.entries():
            if isinstance(entry, WatermarkEntry):
                elements.append(cloudpickle.dumps(("w", entry.timestamp)))
            else:
                assert isinstance(entry, RecordEntry)
                elements.append(cloudpickle.dumps(("r", entry.value, entry.timestamp)))
        return {ASYNC_STATE: (SPLIT_DISTRIBUTE, elements)}

    # --- internals ----------------------------------------------------------------------------

    def _add(self, value: Any, timestamp: int | None) -> None:
        entry = self.queue.try_put(value, timestamp)
        while entry is None:
            self._submit()  # what waits to be started must run, or nothing completes
            self._wait_for_completion()
            entry = self.queue.try_put(value, timestamp)
        self._to_submit.append((entry, value))

    def _submit(self) -> None:
        if self._to_submit:
            items, self._to_submit = self._to_submit, []
            assert self._runner is not None
            self._runner.submit(items)

    def _take_completions(self) -> int:
        """Apply every outcome the runner has posted; let out what the queue allows. Returns how many."""
        completions = self._completions
        taken = 0
        while True:
            try:
                outcome = completions.get_nowait()
            except queue.Empty:
                break
            self._apply(outcome)
            taken += 1
        if taken:
            self._release()
        return taken

    def _wait_for_completion(self) -> None:
        """Block the task thread until one more record completed (backpressure on the input)."""
        runner = self._runner
        while True:
            if self._cancelled.is_set():
                raise TaskCancelledError(f"async operator '{self.name}': the task was cancelled")
            try:
                outcome = self._completions.get(True, _WAIT_S)
            except queue.Empty:
                if runner is None or not runner.is_alive():
                    raise ClusterError(
                        f"async operator '{self.name}': its asyncio thread ended with records in flight"
                    ) from None
                continue
            self._apply(outcome)
            self._take_completions()
            self._release()
            return

    def _apply(self, outcome: Outcome) -> None:
        entry, kind, payload = outcome
        if kind == TIMED_OUT:
            try:
                payload = self._timeout_call(entry.value)
            except Exception as e:
                raise self._noted(e, entry) from None
        elif kind == FAILED:
            raise self._noted(payload, entry)
        self.queue.complete(entry, self._result_list(payload))

    def _noted(self, error: BaseException, entry: RecordEntry) -> BaseException:
        """The user's error, noting the input it failed for (PyFlink's wording)."""
        error.add_note(
            f"Error happens inside the class '{self._class_name}' during handling input '{entry.value}'"
        )
        return error

    def _result_list(self, result: Any) -> list[Any]:
        if isinstance(result, list):
            return result
        if result is None:
            raise RuntimeError(
                "The result of AsyncFunction cannot be none, please check the methods 'async_invoke' "
                f"and 'timeout' of class '{self._class_name}'."
            )
        if isinstance(result, Iterable):
            return list(result)
        raise RuntimeError(
            "The result of AsyncFunction should be of list type, please check the methods "
            f"'async_invoke' and 'timeout' of class '{self._class_name}'."
        )

    def _release(self) -> None:
        """Move what the queue lets out to the pending outputs; a watermark goes out in its place."""
        out = self._out
        timestamped = self._timestamped
        for entry in self.queue.pop_completed():
            if type(entry) is WatermarkEntry:
                self._hand_on()
                self.output.emit_watermark(entry.timestamp)
                out = self._out
                continue
            assert isinstance(entry, RecordEntry) and entry.results is not None
            if timestamped:
                ts = entry.timestamp
                out.extend([(r, ts) for r in entry.results])
            else:
                out.extend(entry.results)

    def _hand_on(self) -> None:
        """Pending outputs go to the operators after this one now (outside a batch)."""
        if self._out:
            out, self._out = self._out, []
            self.output.collect(out)

    def _ensure_poll_timer(self) -> None:
        if self._poll_timer is None and not self.queue.is_empty():
            self._poll_interval_ms = _POLL_MIN_MS
            self._schedule_poll()

    def _schedule_poll(self) -> None:
        pts = self._pts
        self._poll_timer = pts.register_timer(pts.clock() + self._poll_interval_ms, self._on_poll)

    def _on_poll(self, _time: int) -> None:
        """The input is idle: emit what completed meanwhile; keep polling while records are in flight."""
        self._poll_timer = None
        if self._take_completions():
            self._poll_interval_ms = _POLL_MIN_MS
        else:
            self._poll_interval_ms = min(self._poll_interval_ms * 2, _POLL_MAX_MS)
        self._hand_on()
        if not self.queue.is_empty():
            self._schedule_poll()
