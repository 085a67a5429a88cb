"""CompletableFuture: what PyFlink's JobClient methods return (``.result()`` blocks)."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class CompletableFuture(Generic[T]):
    def __init__(
        self, future: concurrent.futures.Future[Any], convert: Callable[[Any], T] | None = None
    ) -> None:
        self._future = future
        self._convert = convert

    def cancel(self) -> bool:
        return self._future.cancel()

    def cancelled(self) -> bool:
        return self._future.cancelled()

    def done(self) -> bool:
        return self._future.done()

    def exception(self) -> BaseException | None:
        return self._future.exception()

    def result(self, timeout: float | None = None) -> T:
        value = self._future.result(timeout)
        return self._convert(value) if self._convert is not None else value
