"""Who has gone quiet: the liveness of heartbeat targets as a pure state machine (Flink:
HeartbeatManager / HeartbeatMonitor).

A component that watches others (the JobMaster its TaskExecutors, the ResourceManager its
TaskExecutors, a TaskExecutor its ResourceManager and JobMasters) feeds a :class:`HeartbeatMonitor`
events with the time (``now``, seconds of the caller's monotonic clock): a target registered, a
heartbeat of it received, a target unregistered, or just :class:`Tick` (time passed). The monitor
answers a :class:`Tick` (only a tick, so a shell feeding the other events from an RPC method
need not carry out timeouts there) with :class:`TargetTimedOut` for each target whose last sign
of life is more than ``timeout_s`` old, and forgets it. It neither sleeps nor reads a clock: the shell
(:func:`~flott.runtime.heartbeat.heartbeat_manager.watch_heartbeats`) decides when to tick, which
is why unit tests can drive it through any timeline.

A heartbeat of a target that is not registered (never was, timed out, or was unregistered) changes
nothing: the shell asks :meth:`HeartbeatMonitor.is_monitored` first and refuses that heartbeat, so
the sender learns it was written off.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TargetRegistered:
    """Start watching ``target_id`` (again: a known target starts afresh). ``description`` names it in
    the timeout message, e.g. ``TaskExecutor <id> (<address>)``."""

    target_id: str
    description: str


@dataclass(frozen=True)
class HeartbeatReceived:
    target_id: str


@dataclass(frozen=True)
class TargetUnregistered:
    target_id: str


@dataclass(frozen=True)
class Tick:
    """Time passed: report the targets that went quiet for longer than the timeout. With
    ``target_id``, only that target is looked at: a sender that learns of a silence from a call of
    its own that failed judges that target alone."""

    target_id: str | None = None


Event = TargetRegistered | HeartbeatReceived | TargetUnregistered | Tick


@dataclass(frozen=True)
class TargetTimedOut:
    """``target_id`` sent nothing for longer than the timeout; the monitor no longer watches it."""

    target_id: str
    message: str


@dataclass
class _Target:
    description: str
    last_heartbeat: float


class HeartbeatMonitor:
    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._targets: dict[str, _Target] = {}

    def handle(self, event: Event, now: float) -> list[TargetTimedOut]:
        if isinstance(event, TargetRegistered):
            self._targets[event.target_id] = _Target(event.description, now)
        elif isinstance(event, HeartbeatReceived):
            target = self._targets.get(event.target_id)
            if target is not None:
                target.last_heartbeat = max(target.last_heartbeat, now)
        elif isinstance(event, TargetUnregistered):
            self._targets.pop(event.target_id, None)
        else:
            return self._timed_out(now, event.target_id)
        return []

    def _timed_out(self, now: float, only: str | None) -> list[TargetTimedOut]:
        out = []
        for target_id, target in list(self._targets.items()):
            if (only is None or target_id == only) and now - target.last_heartbeat > self.timeout_s:
                del self._targets[target_id]
                out.append(
                    TargetTimedOut(
                        target_id,
                        f"heartbeat of {target.description} timed out after {self.timeout_s * 1000:.0f} ms",
                    )
                )
        return out

    def is_monitored(self, target_id: str) -> bool:
        return target_id in self._targets

    def last_heartbeat(self, target_id: str) -> float | None:
        """When the target last gave a sign of life (its registration counts), on the caller's clock."""
        target = self._targets.get(target_id)
        return target.last_heartbeat if target is not None else None

    def next_timeout(self) -> float | None:
        """The earliest time at which a :class:`Tick` can report a timeout (None: nothing watched)."""
        if not self._targets:
            return None
        return min(t.last_heartbeat for t in self._targets.values()) + self.timeout_s

    def __len__(self) -> int:
        return len(self._targets)
