"""``JobStatus``: the states of a job as the JobManager and the REST API report them."""

from __future__ import annotations

from enum import Enum

__all__ = ["JobStatus"]


class JobStatus(Enum):
    """Possible states of a job once it has been accepted by the JobManager.

    Values are the names, as Flink's REST API and flott's messages carry them
    (msgspec encodes an Enum by value). PyFlink numbers them 0..9; nothing in
    its public API depends on the numbers.
    """

    INITIALIZING = "INITIALIZING"
    CREATED = "CREATED"
    RUNNING = "RUNNING"
    FAILING = "FAILING"
    FAILED = "FAILED"
    CANCELLING = "CANCELLING"
    CANCELED = "CANCELED"
    FINISHED = "FINISHED"
    RESTARTING = "RESTARTING"
    SUSPENDED = "SUSPENDED"
    RECONCILING = "RECONCILING"

    def is_globally_terminal_state(self) -> bool:
        """FINISHED, CANCELED, FAILED: the job is done for good; HA data may be dropped."""
        return self in _GLOBALLY_TERMINAL

    def is_terminal_state(self) -> bool:
        """Globally terminal, or SUSPENDED (this JobManager stopped; another may recover it)."""
        return self in _GLOBALLY_TERMINAL or self is JobStatus.SUSPENDED


_GLOBALLY_TERMINAL = frozenset((JobStatus.FINISHED, JobStatus.CANCELED, JobStatus.FAILED))
