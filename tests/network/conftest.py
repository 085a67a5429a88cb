"""Fixtures for data-exchange tests: an event-loop thread per simulated TaskExecutor, real sockets."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

import psutil
import pytest

from flott.runtime.io.network import NetworkConfig, ShuffleEnvironment

T = TypeVar("T")


class LoopThread:
    """An asyncio loop on its own thread, like a TaskExecutor's main thread."""

    def __init__(self, name: str = "te-loop") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 10.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        assert not self._thread.is_alive(), "event loop thread did not stop"
        self.loop.close()


class Worker(threading.Thread):
    """A task-like thread that keeps its result or exception for the test to check."""

    def __init__(self, fn: Callable[[], Any], name: str = "task") -> None:
        super().__init__(name=name, daemon=True)
        self._fn = fn
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self._fn()
        except BaseException as e:
            self.error = e

    def finish(self, timeout: float = 10.0) -> Any:
        """Join and return the result, re-raising the thread's exception."""
        self.join(timeout)
        assert not self.is_alive(), f"thread {self.name} still running after {timeout}s"
        if self.error is not None:
            raise self.error
        return self.result


class EnvFactory:
    """Creates started ShuffleEnvironments, each on its own loop thread, and closes them all."""

    def __init__(self) -> None:
        self._envs: list[tuple[ShuffleEnvironment, LoopThread]] = []

    def __call__(self, **config: Any) -> ShuffleEnvironment:
        loop_thread = LoopThread(f"te-loop-{len(self._envs)}")
        env = ShuffleEnvironment(NetworkConfig(**config), loop=loop_thread.loop)
        loop_thread.run(env.start())
        self._envs.append((env, loop_thread))
        return env

    def loop_of(self, env: ShuffleEnvironment) -> LoopThread:
        return next(lt for e, lt in self._envs if e is env)

    def close(self, env: ShuffleEnvironment) -> None:
        self.loop_of(env).run(env.close())

    def close_all(self) -> None:
        for env, loop_thread in self._envs:
            try:
                loop_thread.run(env.close())
            finally:
                loop_thread.stop()
        self._envs.clear()


@pytest.fixture
def make_env() -> Iterator[EnvFactory]:
    factory = EnvFactory()
    try:
        yield factory
    finally:
        factory.close_all()


@pytest.fixture(autouse=True)
def no_leaked_threads_or_sockets() -> Iterator[None]:
    """Every test must stop the threads and close the sockets it opened (checked after teardown)."""
    threads_before = set(threading.enumerate())
    process = psutil.Process()
    sockets_before = {c.laddr for c in process.net_connections(kind="tcp")}
    yield
    deadline = time.monotonic() + 5
    while True:
        leaked_threads = [t for t in threading.enumerate() if t not in threads_before and t.is_alive()]
        leaked_sockets = [
            c
            for c in process.net_connections(kind="tcp")
            if c.laddr not in sockets_before and c.status != "TIME_WAIT"
        ]
        if not leaked_threads and not leaked_sockets:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"leaked threads {leaked_threads} / sockets {leaked_sockets}")
        time.sleep(0.01)
