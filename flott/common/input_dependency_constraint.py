"""``InputDependencyConstraint`` (kept for API parity; flott schedules pipelined regions itself)."""

from __future__ import annotations

from enum import Enum

__all__ = ["InputDependencyConstraint"]


class InputDependencyConstraint(Enum):
    """When a vertex with several inputs may be scheduled: once ANY input or ALL inputs are ready."""

    ANY = 0
    ALL = 1
