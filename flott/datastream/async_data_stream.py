"""AsyncDataStream (PyFlink's async I/O entry point): not built yet in flott.

The static methods exist with PyFlink's signatures so programs import and
reach them, and raise NotYetSupportedError naming async I/O.
"""

from __future__ import annotations

from typing import Any

from flott.errors import NotYetSupportedError


def _not_yet(call: str) -> NotYetSupportedError:
    return NotYetSupportedError(f"AsyncDataStream.{call}: async I/O is not yet supported by flott")


class AsyncDataStream:
    @staticmethod
    def ordered_wait(
        data_stream: Any, async_function: Any, timeout: Any, capacity: int = 100, output_type: Any = None
    ) -> Any:
        raise _not_yet("ordered_wait")

    @staticmethod
    def ordered_wait_with_retry(
        data_stream: Any,
        async_function: Any,
        timeout: Any,
        async_retry_strategy: Any,
        capacity: int = 100,
        output_type: Any = None,
    ) -> Any:
        raise _not_yet("ordered_wait_with_retry")

    @staticmethod
    def unordered_wait(
        data_stream: Any, async_function: Any, timeout: Any, capacity: int = 100, output_type: Any = None
    ) -> Any:
        raise _not_yet("unordered_wait")

    @staticmethod
    def unordered_wait_with_retry(
        data_stream: Any,
        async_function: Any,
        timeout: Any,
        async_retry_strategy: Any,
        capacity: int = 100,
        output_type: Any = None,
    ) -> Any:
        raise _not_yet("unordered_wait_with_retry")
