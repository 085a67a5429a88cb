"""The asynchronous part of a task's checkpoints (Flink's AsyncCheckpointRunnable).

A checkpoint of a task has two parts. The *synchronous* part runs on the task thread between two
records: every operator captures a consistent view of its state (a copy of the heap state, a
RocksDB snapshot), transactional sinks pre-commit, and the barrier goes downstream. The
*asynchronous* part writes that view to checkpoint storage and then acknowledges (or declines)
the checkpoint to the JobMaster. It runs here, on one worker thread per task, so the task goes
back to its records as soon as the capture is taken.

Rules the runner keeps:

* **Bounded.** At most ``max_in_flight`` asynchronous parts are queued or running (Flink bounds
  them by max-concurrent-checkpoints at the coordinator; a task that is asked for more waits in
  :meth:`AsyncCheckpointRunner.submit` until one ends, so captures cannot pile up in memory).
* **In order.** Parts run one after another in checkpoint order, so a task's acknowledgements
  reach the JobMaster in the order of its barriers.
* **Abort and cancel stop the writer.** :meth:`abort` (the checkpoint was aborted or subsumed)
  and :meth:`close` with ``cancel=True`` (the task fails or is cancelled) set the part's
  cancellation flag; a writer checks it between files, stops, and the runner calls the part's
  ``cleanup`` so no file of it is left behind. A cancelled part neither acknowledges nor
  declines (the JobMaster already knows the checkpoint is over).
* **A failure declines.** An exception from ``write`` cleans up and declines the checkpoint with
  the error; the task goes on.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from flott.runtime.checkpoint.errors import CheckpointCancelledError
from flott.runtime.checkpoint.metadata import TaskStateSnapshot
from flott.runtime.execution.environment import CheckpointResponder

log = logging.getLogger(__name__)


@dataclass
class AsyncSnapshotPart:
    """One checkpoint's asynchronous part.

    ``write(cancelled)`` writes the captured state and returns what the task acknowledges; it
    checks ``cancelled`` between files and raises :class:`CheckpointCancelledError` when set.
    ``cleanup()`` deletes what ``write`` wrote (called after a cancellation or failure) and
    releases the capture; ``release()`` releases the capture after a success (a RocksDB
    snapshot, a hard-linked local checkpoint directory).
    """

    checkpoint_id: int
    write: Callable[[threading.Event], TaskStateSnapshot]
    cleanup: Callable[[], None] = lambda: None
    release: Callable[[], None] = lambda: None
    cancelled: threading.Event = field(default_factory=threading.Event)


class AsyncCheckpointRunner:
    """See the module docstring. ``submit``/``abort``/``close`` are called from the task thread."""

    def __init__(self, name: str, responder: CheckpointResponder | None, max_in_flight: int = 1) -> None:
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be >= 1")
        self._name = name
        self._responder = responder
        self._max_in_flight = max_in_flight
        self._cond = threading.Condition()
        self._queue: deque[AsyncSnapshotPart] = deque()
        self._running: AsyncSnapshotPart | None = None
        self._closed = False
        self._thread: threading.Thread | None = None
        self.completed = 0
        """Parts that acknowledged (for tests and metrics)."""

    @property
    def in_flight(self) -> int:
        with self._cond:
            return len(self._queue) + (1 if self._running is not None else 0)

    def submit(self, part: AsyncSnapshotPart, task_cancelled: Callable[[], bool] = lambda: False) -> bool:
        """Queue ``part``; waits while ``max_in_flight`` parts are in flight. False (and the part
        cleaned up) if the runner closed or the task was cancelled meanwhile."""
        with self._cond:
            while (
                not self._closed
                and not task_cancelled()
                and len(self._queue) + (1 if self._running is not None else 0) >= self._max_in_flight
            ):
                self._cond.wait(0.05)
            if self._closed or task_cancelled():
                accepted = False
            else:
                accepted = True
                self._queue.append(part)
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name=f"async-checkpoint {self._name}", daemon=True
                    )
                    self._thread.start()
                self._cond.notify_all()
        if not accepted:
            part.cancelled.set()
            self._cleanup(part)
        return accepted

    def abort(self, checkpoint_id: int) -> None:
        """Stop the part of this checkpoint (aborted or subsumed), if it is still in flight."""
        with self._cond:
            parts = list(self._queue) + ([self._running] if self._running is not None else [])
        for part in parts:
            if part.checkpoint_id == checkpoint_id:
                part.cancelled.set()

    def wait_idle(self, task_cancelled: Callable[[], bool] = lambda: False) -> None:
        """Block until every submitted part ended (a task finishing sends its last acknowledgements)."""
        with self._cond:
            while (self._queue or self._running is not None) and not task_cancelled():
                self._cond.wait(0.05)

    def close(self, cancel: bool, timeout_s: float = 30.0) -> None:
        """Stop the worker: ``cancel`` stops the parts in flight (and cleans them up), else they end
        first. Returns once the worker thread ended (or ``timeout_s`` passed)."""
        with self._cond:
            self._closed = True
            parts = list(self._queue) + ([self._running] if self._running is not None else [])
            self._cond.notify_all()
            thread = self._thread
        if cancel:
            for part in parts:
                part.cancelled.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)
            if thread.is_alive():
                log.warning(
                    "%s: asynchronous checkpoint writer did not stop in %.0f s", self._name, timeout_s
                )

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if not self._queue:
                    return
                part = self._running = self._queue.popleft()
            try:
                self._run_part(part)
            finally:
                with self._cond:
                    self._running = None
                    self._cond.notify_all()

    def _run_part(self, part: AsyncSnapshotPart) -> None:
        cid = part.checkpoint_id
        try:
            if part.cancelled.is_set():
                raise CheckpointCancelledError
            snapshot = part.write(part.cancelled)
            if part.cancelled.is_set():
                raise CheckpointCancelledError
        except CheckpointCancelledError:
            log.info("%s: asynchronous part of checkpoint %d cancelled", self._name, cid)
            self._cleanup(part)
            return
        except Exception as e:
            log.warning("%s: asynchronous part of checkpoint %d failed: %s", self._name, cid, e)
            self._cleanup(part)
            if self._responder is not None:
                self._responder.decline(cid, f"{type(e).__name__}: {e}")
            return
        try:
            part.release()
        except Exception as e:  # the snapshot is written; a leftover capture is only garbage
            log.warning("%s: releasing the capture of checkpoint %d failed: %s", self._name, cid, e)
        self.completed += 1
        if self._responder is not None:
            self._responder.acknowledge(cid, snapshot)

    def _cleanup(self, part: AsyncSnapshotPart) -> None:
        try:
            part.cleanup()
        except Exception as e:
            log.warning(
                "%s: cleaning up checkpoint %d failed: %s", self._name, part.checkpoint_id, e
            )
