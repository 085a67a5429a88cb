"""An asyncio event loop on a daemon thread, for the synchronous user API.

flott is async inside; ``env.execute()`` and the CLI are synchronous. They hand
coroutines to this loop and wait on the concurrent future.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from flott.runtime.entrypoint import event_loop

T = TypeVar("T")


class LoopThread:
    def __init__(self, name: str = "flott-client-loop") -> None:
        self.loop = event_loop.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    async def _cancel_pending_then_stop(self) -> None:
        """What ``asyncio.run`` does at its end: tasks still pending are cancelled and awaited,
        so none is destroyed pending (and logged to the program's stderr) when the loop goes."""
        current = asyncio.current_task()
        pending = [t for t in asyncio.all_tasks(self.loop) if t is not current]
        for task in pending:
            task.cancel()
        try:
            await asyncio.wait_for(asyncio.gather(*pending, return_exceptions=True), 2.0)
        except (TimeoutError, asyncio.CancelledError):
            pass
        finally:
            self.loop.stop()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return self.submit(coro).result(timeout)

    def stop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.create_task, self._cancel_pending_then_stop())
        if threading.current_thread() is not self._thread:
            self._thread.join(5.0)


_shared: LoopThread | None = None
_lock = threading.Lock()


def shared_loop_thread() -> LoopThread:
    """One client loop per process: embedded clusters and clients live on it."""
    global _shared
    with _lock:
        if _shared is None:
            _shared = LoopThread()
        return _shared


def _stop_shared_loop_thread() -> None:
    """Stop the shared loop before the interpreter finalizes.

    Registered when this module is imported, so it runs after the exit hooks of the modules
    that import it (atexit is last in, first out): the embedded clusters are closed on the
    loop first, then the loop stops. A daemon thread still inside the event loop while the
    interpreter tears down its objects is how a finished program crashes at exit (SIGSEGV
    after all its output was printed).
    """
    with _lock:
        shared = _shared
    if shared is not None:
        shared.stop()


atexit.register(_stop_shared_loop_thread)
