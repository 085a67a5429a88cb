"""Checkpoint statistics in the shape of Flink's ``GET /jobs/:id/checkpoints`` (CheckpointingStatistics)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any


@dataclass
class CheckpointStats:
    """One checkpoint or savepoint, pending, completed or failed."""

    checkpoint_id: int
    checkpoint_type: str
    trigger_timestamp: int
    num_subtasks: int
    vertex_of: dict[str, str]
    """execution id -> vertex id, for the per-task breakdown."""
    status: str = "IN_PROGRESS"
    acks: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    """execution id -> (ack timestamp, state size, checkpointed size).

    Flink's two sizes: ``state_size`` is the full size of the state the checkpoint refers to,
    ``checkpointed_size`` the bytes this checkpoint wrote (smaller for an incremental one)."""
    external_path: str | None = None
    discarded: bool = False
    failure_timestamp: int | None = None
    failure_message: str | None = None

    @property
    def is_savepoint(self) -> bool:
        return self.checkpoint_type in ("SAVEPOINT", "SYNC_SAVEPOINT")

    @property
    def state_size(self) -> int:
        return sum(size for _, size, _ in self.acks.values())

    @property
    def checkpointed_size(self) -> int:
        return sum(size for _, _, size in self.acks.values())

    @property
    def latest_ack_timestamp(self) -> int:
        return max((t for t, _, _ in self.acks.values()), default=-1)

    @property
    def end_to_end_duration(self) -> int:
        end = self.latest_ack_timestamp
        if self.status == "FAILED" and self.failure_timestamp is not None:
            end = self.failure_timestamp
        return max(end - self.trigger_timestamp, 0) if end >= 0 else 0

    def to_rest(self) -> dict[str, Any]:
        class_name = {"IN_PROGRESS": "in_progress", "COMPLETED": "completed", "FAILED": "failed"}[self.status]
        tasks: dict[str, dict[str, Any]] = {}
        for ex, vertex in self.vertex_of.items():
            t = tasks.setdefault(
                vertex,
                {"id": self.checkpoint_id, "status": self.status, "latest_ack_timestamp": -1,
                 "checkpointed_size": 0, "state_size": 0, "end_to_end_duration": 0,
                 "alignment_buffered": 0, "processed_data": 0, "persisted_data": 0,
                 "num_subtasks": 0, "num_acknowledged_subtasks": 0},
            )  # fmt: skip
            t["num_subtasks"] += 1
            if ex in self.acks:
                ts, size, written = self.acks[ex]
                t["num_acknowledged_subtasks"] += 1
                t["state_size"] += size
                t["checkpointed_size"] += written
                t["latest_ack_timestamp"] = max(t["latest_ack_timestamp"], ts)
                t["end_to_end_duration"] = max(t["latest_ack_timestamp"] - self.trigger_timestamp, 0)
        out: dict[str, Any] = {
            "className": class_name,
            "id": self.checkpoint_id,
            "status": self.status,
            "is_savepoint": self.is_savepoint,
            "savepointFormat": "CANONICAL" if self.is_savepoint else None,
            "checkpoint_type": self.checkpoint_type,
            "trigger_timestamp": self.trigger_timestamp,
            "latest_ack_timestamp": self.latest_ack_timestamp,
            "state_size": self.state_size,
            "checkpointed_size": self.checkpointed_size,
            "end_to_end_duration": self.end_to_end_duration,
            "alignment_buffered": 0,
            "processed_data": 0,
            "persisted_data": 0,
            "num_subtasks": self.num_subtasks,
            "num_acknowledged_subtasks": len(self.acks),
            "tasks": tasks,
        }
        if self.status == "COMPLETED":
            out["external_path"] = self.external_path
            out["discarded"] = self.discarded
        elif self.status == "FAILED":
            out["failure_timestamp"] = self.failure_timestamp
            out["failure_message"] = self.failure_message
        return out


def stats_summary(values: list[int]) -> dict[str, Any]:
    """Flink's StatsSummaryDto of ``values``: min, max, average and nearest-rank quantiles."""
    if not values:
        return {"min": 0, "max": 0, "avg": 0, "p50": 0.0, "p90": 0.0, "p95": 0.0, "p99": 0.0, "p999": 0.0}
    ordered = sorted(values)

    def q(p: float) -> float:
        # Nearest-rank quantile over all completed checkpoints.
        return float(ordered[min(len(ordered) - 1, max(0, round(p * len(ordered)) - 1))])

    return {"min": ordered[0], "max": ordered[-1], "avg": sum(ordered) // len(ordered),
            "p50": q(0.5), "p90": q(0.9), "p95": q(0.95), "p99": q(0.99), "p999": q(0.999)}  # fmt: skip


class CheckpointStatsTracker:
    """Counts, latest completed/savepoint/failed/restored, summary and a bounded history."""

    def __init__(self, history_size: int = 10) -> None:
        self.history: deque[CheckpointStats] = deque(maxlen=history_size)
        self.completed = 0
        self.failed = 0
        self.restored = 0
        self.in_progress: dict[int, CheckpointStats] = {}
        self.latest_completed: CheckpointStats | None = None
        self.latest_savepoint: CheckpointStats | None = None
        self.latest_failed: CheckpointStats | None = None
        self.latest_restored: dict[str, Any] | None = None
        self._durations: list[int] = []
        self._sizes: list[int] = []
        self._checkpointed_sizes: list[int] = []

    def reported_pending(self, stats: CheckpointStats) -> None:
        self.in_progress[stats.checkpoint_id] = stats
        self.history.appendleft(stats)

    def reported_completed(self, stats: CheckpointStats, external_path: str) -> None:
        self.in_progress.pop(stats.checkpoint_id, None)
        stats.status = "COMPLETED"
        stats.external_path = external_path
        self.completed += 1
        self._durations.append(stats.end_to_end_duration)
        self._sizes.append(stats.state_size)
        self._checkpointed_sizes.append(stats.checkpointed_size)
        if stats.is_savepoint:
            self.latest_savepoint = stats
        else:
            self.latest_completed = stats

    def reported_failed(self, stats: CheckpointStats, now_ms: int, message: str) -> None:
        self.in_progress.pop(stats.checkpoint_id, None)
        stats.status = "FAILED"
        stats.failure_timestamp = now_ms
        stats.failure_message = message
        self.failed += 1
        self.latest_failed = stats

    def reported_restored(
        self, checkpoint_id: int, external_path: str, is_savepoint: bool, now_ms: int
    ) -> None:
        self.restored += 1
        self.latest_restored = {"id": checkpoint_id, "restore_timestamp": now_ms,
                                "is_savepoint": is_savepoint, "external_path": external_path}  # fmt: skip

    def to_rest(self) -> dict[str, Any]:
        """The body of ``GET /jobs/:id/checkpoints``."""
        zero = stats_summary([])
        return {
            "counts": {
                "restored": self.restored,
                "total": self.completed + self.failed + len(self.in_progress),
                "in_progress": len(self.in_progress),
                "completed": self.completed,
                "failed": self.failed,
            },
            "summary": {
                "checkpointed_size": stats_summary(self._checkpointed_sizes),
                "state_size": stats_summary(self._sizes),
                "end_to_end_duration": stats_summary(self._durations),
                "alignment_buffered": zero,
                "processed_data": zero,
                "persisted_data": zero,
            },
            "latest": {
                "completed": self.latest_completed.to_rest() if self.latest_completed else None,
                "savepoint": self.latest_savepoint.to_rest() if self.latest_savepoint else None,
                "failed": self.latest_failed.to_rest() if self.latest_failed else None,
                "restored": self.latest_restored,
            },
            "history": [s.to_rest() for s in self.history],
        }
