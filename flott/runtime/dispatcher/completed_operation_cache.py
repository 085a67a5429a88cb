"""Flink's asynchronous-operation pattern: trigger → ``request-id``; poll the status URL until COMPLETED.

:class:`CompletedOperationCache` (Flink's name) holds each triggered
operation under its key: running, then its result or failure for
``rest.async.store-duration`` (default 5 min) after completion. Triggering
the same key again does not start a second operation (Flink: idempotent by
trigger id). An unknown key is a 404. Failed operations are still
``COMPLETED``; the failure travels inside ``operation``.

The Dispatcher keeps the cache of its operations (savepoints, stop, checkpoints,
disposal, rescale), as in Flink; the REST endpoint keeps one for its own
(dataset deletion). It lives in the runtime because the Dispatcher needs it and
the runtime never imports the REST layer.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, NamedTuple, TypeVar

from flott.errors import OperationCacheClosedError, OperationNotFoundError
from flott.runtime.jobgraph import new_id

R = TypeVar("R")


class OperationKey(NamedTuple):
    """``scope`` is the job id for job operations, ``""`` for cluster ones."""

    scope: str
    trigger_id: str


@dataclass(frozen=True)
class OperationResult(Generic[R]):
    """IN_PROGRESS (``done`` False), or COMPLETED with ``value`` or ``failure``."""

    done: bool
    value: R | None = None
    failure: BaseException | None = None


def _failure_is_kept(task: asyncio.Task[R]) -> None:
    """Mark a failure as retrieved: the cache keeps it for :meth:`CompletedOperationCache.get`.

    A failed operation nobody polls (a client that gave up, a cache dropped at
    shutdown) would otherwise log "Task exception was never retrieved" when its
    task is collected, a traceback in the log for a failure that was answered.
    """
    if not task.cancelled():
        task.exception()


class CompletedOperationCache(Generic[R]):
    def __init__(self, store_duration_s: float = 300.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._store_duration = store_duration_s
        self._clock = clock
        self._tasks: dict[OperationKey, asyncio.Task[R]] = {}
        self._completed_at: dict[OperationKey, float] = {}
        self._closed = False

    def trigger(self, scope: str, trigger_id: str | None, operation: Callable[[], Awaitable[R]]) -> str:
        """Start ``operation`` under ``(scope, trigger_id)`` unless the key exists; returns the trigger id."""
        if self._closed:
            raise OperationCacheClosedError("the REST endpoint is shutting down; no new operations accepted")
        self._evict()
        key = OperationKey(scope, trigger_id or new_id())
        if key not in self._tasks:

            async def run() -> R:
                try:
                    return await operation()
                finally:
                    self._completed_at[key] = self._clock()

            task = asyncio.get_running_loop().create_task(run())
            task.add_done_callback(_failure_is_kept)
            self._tasks[key] = task
        return key.trigger_id

    def get(self, scope: str, trigger_id: str) -> OperationResult[R]:
        """The operation's state; OperationNotFoundError (404) for a key never triggered or long expired."""
        self._evict()
        key = OperationKey(scope, trigger_id)
        task = self._tasks.get(key)
        if task is None:
            raise OperationNotFoundError(
                f"Operation not found under key: {key.trigger_id}" + (f" (job {scope})" if scope else "")
            )
        if not task.done():
            return OperationResult(done=False)
        if task.cancelled():
            return OperationResult(done=True, failure=asyncio.CancelledError("operation was cancelled"))
        exc = task.exception()
        if exc is not None:
            return OperationResult(done=True, failure=exc)
        return OperationResult(done=True, value=task.result())

    def _evict(self) -> None:
        cutoff = self._clock() - self._store_duration
        for key in [k for k, t in self._completed_at.items() if t < cutoff]:
            self._completed_at.pop(key, None)
            self._tasks.pop(key, None)

    async def close(self, timeout_s: float = 5.0) -> None:
        """Refuse new operations and give running ones ``timeout_s`` to finish, then cancel them."""
        self._closed = True
        running = [t for t in self._tasks.values() if not t.done()]
        if running:
            _, pending = await asyncio.wait(running, timeout=timeout_s)
            for t in pending:
                t.cancel()
            for t in pending:
                with contextlib.suppress(BaseException):
                    await t
