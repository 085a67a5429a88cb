"""JobStatus: the states of a job, with Flink's names and meanings."""

from __future__ import annotations

from enum import Enum


class JobStatus(Enum):
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
        """The job is done for good: FINISHED, CANCELED or FAILED (never restarted)."""
        return self in (JobStatus.FINISHED, JobStatus.CANCELED, JobStatus.FAILED)

    def is_terminal_state(self) -> bool:
        """Terminal for this JobManager (SUSPENDED jobs may be recovered by another one)."""
        return self.is_globally_terminal_state() or self is JobStatus.SUSPENDED
