"""The TaskExecutor processes a ResourceManager starts itself, as a pure state machine (Flink: the
worker bookkeeping of ActiveResourceManager and the SlotManager's idle-TaskManager check).

With a process driver the ResourceManager starts workers (a session cluster's local TaskManagers,
an application cluster's workers on demand) and replaces a crashed one, at most
``max_replacements_per_minute`` a minute (Flink: ``resourcemanager.start-worker.max-failure-rate``)
so a worker that crashes at start does not make the cluster fork forever.

On demand only (Flink's active mode, where workers come and go with the jobs' slot requests):

* a worker that does not register within ``registration_timeout_s``
  (``resourcemanager.taskmanager-registration.timeout``) is released: it hangs, and while it counts
  as "starting" no other worker would be started for the slots it was meant to bring;
* a registered worker whose slots have all been free for ``idle_timeout_s``
  (``resourcemanager.taskmanager-timeout``) while no slot request waits is released.

A released worker's exit is expected: it is not replaced.

Events come with the time (``now``, seconds of the ResourceManager's monotonic clock); the shell
ticks with the SlotManager's view (which registered workers are idle, whether requests wait) and
carries out the actions (start a process, stop one).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WorkerStarted:
    resource_id: str


@dataclass(frozen=True)
class WorkerRegistered:
    resource_id: str


@dataclass(frozen=True)
class WorkerExited:
    resource_id: str
    exit_code: int


@dataclass(frozen=True)
class Tick:
    """``idle``: the registered workers none of whose slots is allocated; ``requests_waiting``:
    slot requests the free slots cannot serve wait (an idle worker is then about to be used)."""

    idle: frozenset[str]
    requests_waiting: bool


Event = WorkerStarted | WorkerRegistered | WorkerExited | Tick


@dataclass(frozen=True)
class StartWorker:
    """Start a worker in place of a crashed one."""

    replaces: str


@dataclass(frozen=True)
class ReplacementRefused:
    """A crashed worker is not replaced: ``recent`` were replaced within the last minute."""

    resource_id: str
    recent: int


@dataclass(frozen=True)
class ReleaseWorker:
    resource_id: str
    reason: str


Action = StartWorker | ReplacementRefused | ReleaseWorker


@dataclass
class _Worker:
    started: float
    registered: bool = False
    idle_since: float | None = None


_REPLACEMENT_WINDOW_S = 60.0


class ActiveWorkers:
    def __init__(
        self,
        max_replacements_per_minute: int,
        idle_timeout_s: float | None = None,
        registration_timeout_s: float | None = None,
    ) -> None:
        """``idle_timeout_s`` / ``registration_timeout_s`` None: workers are never released (a
        fixed set of local workers)."""
        self._max_replacements = max_replacements_per_minute
        self._idle_timeout = idle_timeout_s
        self._registration_timeout = registration_timeout_s
        self._workers: dict[str, _Worker] = {}
        self._released: set[str] = set()
        self._replacements: list[float] = []

    def handle(self, event: Event, now: float) -> list[Action]:
        if isinstance(event, WorkerStarted):
            self._workers[event.resource_id] = _Worker(now)
        elif isinstance(event, WorkerRegistered):
            # a worker started before this ResourceManager knew (or lost and back) is one of ours too
            worker = self._workers.setdefault(event.resource_id, _Worker(now))
            worker.registered = True
        elif isinstance(event, WorkerExited):
            return self._exited(event, now)
        else:
            return self._tick(event, now)
        return []

    def _exited(self, event: WorkerExited, now: float) -> list[Action]:
        self._workers.pop(event.resource_id, None)
        if event.resource_id in self._released:
            self._released.discard(event.resource_id)
            return []
        if event.exit_code == 0:
            return []
        self._replacements = [t for t in self._replacements if now - t < _REPLACEMENT_WINDOW_S]
        if len(self._replacements) >= self._max_replacements:
            return [ReplacementRefused(event.resource_id, len(self._replacements))]
        self._replacements.append(now)
        return [StartWorker(event.resource_id)]

    def _tick(self, event: Tick, now: float) -> list[Action]:
        out: list[Action] = []
        for rid, worker in list(self._workers.items()):
            if not worker.registered:
                limit = self._registration_timeout
                if limit is not None and now - worker.started > limit:
                    out.append(self._release(rid, f"it did not register within {limit:.0f} s"))
                continue
            if rid not in event.idle or event.requests_waiting:
                worker.idle_since = None
                continue
            if worker.idle_since is None:
                worker.idle_since = now
            if self._idle_timeout is not None and now - worker.idle_since > self._idle_timeout:
                out.append(self._release(rid, f"it has been idle for {self._idle_timeout:.0f} s"))
        return out

    def _release(self, resource_id: str, reason: str) -> ReleaseWorker:
        del self._workers[resource_id]
        self._released.add(resource_id)
        return ReleaseWorker(resource_id, reason)

    def next_timeout(self) -> float | None:
        """The earliest time a :class:`Tick` could release a worker (None: none can be)."""
        times = []
        for w in self._workers.values():
            if not w.registered and self._registration_timeout is not None:
                times.append(w.started + self._registration_timeout)
            elif w.registered and w.idle_since is not None and self._idle_timeout is not None:
                times.append(w.idle_since + self._idle_timeout)
        return min(times, default=None)
