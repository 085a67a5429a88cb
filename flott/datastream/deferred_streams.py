"""Stream types of features flott builds in later issues.

CloseableIterator exists under its PyFlink name (programs import and annotate
with it) and raises NotYetSupportedError naming the feature from every
operation. Today the DataStream method that would return it already raises,
so user code only meets this class through imports and type hints. (Windowed,
connected, broadcast and cached streams live in ``windowed_stream``,
``connected_streams``, ``broadcast_stream`` and ``data_stream``.)
"""

from __future__ import annotations

from typing import Any

from flott.errors import NotYetSupportedError


def _not_yet(feature: str, call: str) -> NotYetSupportedError:
    return NotYetSupportedError(f"{call}: {feature} is not yet supported by flott")


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
