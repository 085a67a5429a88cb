"""A TaskExecutor's JobMaster connections as a pure state machine (Flink: JobTable / JobLeaderService).

Per job the table knows the JobMaster that leads it (address, endpoint, fencing token) and the state
of the connection to it:

* CONNECTING: the ResourceManager assigned a slot of ours to the job and named its JobMaster; the
  slot is offered and the JobMaster heartbeated, but it has not accepted a slot yet. A heartbeat it
  refuses means nothing yet (it may not have seen our offer).
* REGISTERED: the JobMaster accepted a slot, so it counts on this TaskExecutor. From then on a
  heartbeat it refuses means it wrote this TaskExecutor off: the job's tasks here run unsupervised
  next to their replacements, and are released.

A connection is *lost* when the JobMaster refuses a heartbeat while REGISTERED, when (HA only) it
has not answered for longer than ``heartbeat.timeout`` (it died or lost the leadership; without HA a
JobMaster that does not answer went with its JobManager process, and this TaskExecutor learns that
from its ResourceManager), or when a new ResourceManager leader comes whose session did not hand out
the JobMaster's token. A lost connection (LOST) is answered with one :class:`ReleaseJob`, and
nothing more is said about it; it leaves the table when the shell closes the job
(:class:`JobClosed`), and a slot request naming a JobMaster for the job connects afresh.

A slot request naming another JobMaster for a known job (a new leader's, or a restarted one's)
replaces the connection: :class:`ConnectJobMaster` again. Events about a replaced connection (its
heartbeat loop answering late) carry the old token and change nothing.

Events come in with the time (``now``, monotonic seconds); the liveness of the JobMasters is a
:class:`~flott.runtime.heartbeat.heartbeat_monitor.HeartbeatMonitor`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from flott.runtime.heartbeat.heartbeat_monitor import (
    HeartbeatMonitor,
    HeartbeatReceived,
    TargetRegistered,
    TargetUnregistered,
    Tick,
)
from flott.runtime.highavailability.services import is_token_of_session


class ConnectionState(enum.Enum):
    CONNECTING = "CONNECTING"
    REGISTERED = "REGISTERED"
    LOST = "LOST"


@dataclass
class JobConnection:
    job_id: str
    address: str
    endpoint: str
    token: str
    state: ConnectionState = ConnectionState.CONNECTING


# -- events -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobLeaderFound:
    """A slot request of the ResourceManager names the job's JobMaster."""

    job_id: str
    address: str
    endpoint: str
    token: str


@dataclass(frozen=True)
class SlotsAccepted:
    """The JobMaster (of ``token``) accepted a slot we offered."""

    job_id: str
    token: str


@dataclass(frozen=True)
class HeartbeatAnswered:
    job_id: str
    token: str


@dataclass(frozen=True)
class HeartbeatRefused:
    """The JobMaster answered a heartbeat with TaskExecutorLostError (it does not know us)."""

    job_id: str
    token: str
    error: str


@dataclass(frozen=True)
class HeartbeatFailed:
    """A heartbeat to the JobMaster got no answer (connection refused, timeout, no endpoint)."""

    job_id: str
    token: str
    error: str


@dataclass(frozen=True)
class ResourceManagerLeaderChanged:
    """HA: this TaskExecutor now serves the ResourceManager of leader session ``session_id``."""

    session_id: str


@dataclass(frozen=True)
class JobClosed:
    """The shell closed the job here (its last slot freed, its JobMaster disconnected it, released)."""

    job_id: str


Event = (
    JobLeaderFound
    | SlotsAccepted
    | HeartbeatAnswered
    | HeartbeatRefused
    | HeartbeatFailed
    | ResourceManagerLeaderChanged
    | JobClosed
)


# -- actions ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConnectJobMaster:
    """Open a connection to this JobMaster and start heartbeating it (dropping the job's previous
    connection, if any, without touching its tasks or slots)."""

    connection: JobConnection


@dataclass(frozen=True)
class ReleaseJob:
    """The job's JobMaster is lost: cancel the job's tasks here, free its slots, close the job."""

    job_id: str
    cause: str


Action = ConnectJobMaster | ReleaseJob


class JobTable:
    def __init__(self, heartbeat_timeout_s: float, high_availability: bool) -> None:
        self._ha = high_availability
        self.jobs: dict[str, JobConnection] = {}
        self._heartbeats = HeartbeatMonitor(heartbeat_timeout_s)
        """When each JobMaster last answered (HA judges silence by it)."""

    def handle(self, event: Event, now: float) -> list[Action]:
        if isinstance(event, JobLeaderFound):
            return self._leader_found(event, now)
        if isinstance(event, ResourceManagerLeaderChanged):
            return [
                self._lose(job_id, "its JobManager lost the leadership")
                for job_id, conn in list(self.jobs.items())
                if conn.state is not ConnectionState.LOST
                and not is_token_of_session(conn.token, event.session_id)
            ]
        if isinstance(event, JobClosed):
            self.jobs.pop(event.job_id, None)
            self._heartbeats.handle(TargetUnregistered(event.job_id), now)
            return []
        conn = self.jobs.get(event.job_id)
        if conn is None or conn.token != event.token or conn.state is ConnectionState.LOST:
            return []  # about a connection that was replaced, lost or closed meanwhile
        if isinstance(event, SlotsAccepted):
            conn.state = ConnectionState.REGISTERED
        elif isinstance(event, HeartbeatAnswered):
            self._heartbeats.handle(HeartbeatReceived(event.job_id), now)
        elif isinstance(event, HeartbeatRefused):
            if conn.state is ConnectionState.REGISTERED:
                return [self._lose(event.job_id, event.error)]
        elif self._ha and self._heartbeats.handle(Tick(event.job_id), now):
            return [self._lose(event.job_id, f"JobManager of job {event.job_id} lost: {event.error}")]
        return []

    def _leader_found(self, event: JobLeaderFound, now: float) -> list[Action]:
        conn = self.jobs.get(event.job_id)
        if conn is not None and conn.token == event.token and conn.state is not ConnectionState.LOST:
            return []
        conn = JobConnection(event.job_id, event.address, event.endpoint, event.token)
        self.jobs[event.job_id] = conn
        self._heartbeats.handle(TargetRegistered(event.job_id, f"the JobManager of job {event.job_id}"), now)
        return [ConnectJobMaster(conn)]

    def _lose(self, job_id: str, cause: str) -> ReleaseJob:
        """The connection stays in the table until the shell closed the job (:class:`JobClosed`)."""
        self.jobs[job_id].state = ConnectionState.LOST
        self._heartbeats.handle(TargetUnregistered(job_id), 0.0)
        return ReleaseJob(job_id, cause)

    def is_connected(self, job_id: str, token: str) -> bool:
        """Is this the job's current connection (a heartbeat loop of a replaced one stops)?"""
        conn = self.jobs.get(job_id)
        return conn is not None and conn.token == token and conn.state is not ConnectionState.LOST

    def is_registered(self, job_id: str) -> bool:
        conn = self.jobs.get(job_id)
        return conn is not None and conn.state is ConnectionState.REGISTERED

    def __contains__(self, job_id: object) -> bool:
        return job_id in self.jobs
