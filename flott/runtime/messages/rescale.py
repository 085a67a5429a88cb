"""What the Dispatcher records of a job's rescales (``PATCH /jobs/:id/rescaling``), for ``/rescales/*``.

flott rescales a job by stopping it with a savepoint and starting it again at the new
parallelism (Flink's adaptive scheduler rescales in place; its REST API describes both with the
same records). Times are epoch milliseconds; 0 is "not yet".
"""

from __future__ import annotations

import msgspec


class VertexRescale(msgspec.Struct, frozen=True, kw_only=True):
    vertex_id: str
    name: str
    slot_sharing_group: str
    max_parallelism: int
    before: int
    after: int


class RescaleSpan(msgspec.Struct, frozen=True, kw_only=True):
    """A stretch of the rescale in one state (Flink's scheduler-state span)."""

    state: str
    enter_ms: int
    leave_ms: int = 0
    error: str | None = None


class RescaleRecord(msgspec.Struct, frozen=True, kw_only=True):
    uuid: str
    attempt: int
    """1 for the job's first rescale, then 2, ..."""
    start_ms: int
    end_ms: int = 0
    trigger_cause: str = "UPDATE_REQUIREMENT"
    terminal_state: str | None = None
    """COMPLETED or FAILED once over; None while in progress."""
    terminated_reason: str | None = None
    vertices: list[VertexRescale] = msgspec.field(default_factory=list)
    spans: list[RescaleSpan] = msgspec.field(default_factory=list)

    @property
    def duration_ms(self) -> int:
        return max(0, self.end_ms - self.start_ms) if self.end_ms else 0


class JobRescales(msgspec.Struct, frozen=True, kw_only=True):
    """A job's rescale history (newest first, at most the configured size), the latest rescale of
    each terminal state, and the counts and durations of every rescale since the job started."""

    history_size: int
    """How many rescales the history keeps (``web.adaptive-scheduler.rescale-history.size``)."""
    history: list[RescaleRecord]
    latest: dict[str, RescaleRecord]
    counts: dict[str, int]
    """COMPLETED, FAILED, IGNORED and IN_PROGRESS."""
    durations_ms: dict[str, list[int]]
    """Per terminal state, the durations of the most recent rescales (bounded)."""
