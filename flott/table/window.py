"""PyFlink's group and over windows (``Tumble``, ``Slide``, ``Session``, ``Over``).

Event-time windows are not planned yet: building one raises NotYetSupportedError naming it, so a
program fails where it asks for a window instead of running something else.
"""

from __future__ import annotations

from typing import Any

from flott.errors import NotYetSupportedError

__all__ = ["Over", "Session", "Slide", "Tumble"]


def _refuse(what: str) -> NotYetSupportedError:
    return NotYetSupportedError(f"{what} windows are not yet supported by flott's Table API")


class Tumble:
    @classmethod
    def over(cls, size: Any) -> Any:
        raise _refuse("Tumble")


class Slide:
    @classmethod
    def over(cls, size: Any) -> Any:
        raise _refuse("Slide")


class Session:
    @classmethod
    def with_gap(cls, gap: Any) -> Any:
        raise _refuse("Session")


class Over:
    @classmethod
    def order_by(cls, order_by: Any) -> Any:
        raise _refuse("Over")

    @classmethod
    def partition_by(cls, *partition_by: Any) -> Any:
        raise _refuse("Over")
