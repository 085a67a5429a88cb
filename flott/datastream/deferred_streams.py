"""Stream types of features flott builds in later issues.

CachedDataStream and CloseableIterator exist under their PyFlink names
(programs import and annotate with them), record what they are given, and
raise NotYetSupportedError naming the feature from every operation. Today the
DataStream methods that would return them already raise, so user code only
meets these classes through imports and type hints. (Windowed, connected and
broadcast streams live in ``windowed_stream``, ``connected_streams`` and
``broadcast_stream``.)
"""

from __future__ import annotations

from typing import Any

from flott.errors import NotYetSupportedError


def _not_yet(feature: str, call: str) -> NotYetSupportedError:
    return NotYetSupportedError(f"{call}: {feature} is not yet supported by flott")


class CachedDataStream:
    """``DataStream.cache()``: results cached across jobs of one environment."""

    def __init__(self, data_stream: Any) -> None:
        self._data_stream = data_stream

    def invalidate(self) -> None:
        raise _not_yet("cached data streams", "CachedDataStream.invalidate")


class CloseableIterator:
    """What ``execute_and_collect`` returns in PyFlink (collecting results comes later)."""

    def __iter__(self) -> CloseableIterator:
        return self

    def __next__(self) -> Any:
        raise _not_yet("collecting results to the client", "CloseableIterator")

    def close(self) -> None:
        return None

    def __enter__(self) -> CloseableIterator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
