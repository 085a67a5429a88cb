"""The leadership state machine of one leader election, free of sockets and threads.

A driver (the ZooKeeper latch, or the embedded one) feeds it events; it answers
with actions the driver carries out. Rules (Flink's DefaultLeaderElectionService
plus kazoo's connection states):

* ``Granted`` (the latch was acquired) opens a new leadership session with a fresh
  session id, which is the fencing token, and tells the contender.
* The leader's address is published only after the contender confirmed the
  *current* session id (a confirmation for an older session is ignored), and
  never while the connection is suspended (it is published on reconnect).
* ``Suspended`` does NOT revoke leadership: kazoo's SUSPENDED means "not sure".
  It arms a bound; if the connection is still suspended when the bound elapses
  (``SuspendTimeout``) leadership is revoked, so a leader cut off from ZooKeeper
  stops acting as leader within that bound even though kazoo only reports LOST
  once it reaches a server again.
* ``Lost`` (session expired) and ``Revoked`` (the latch node vanished) revoke
  leadership and re-join the election.
* ``Reconnected`` (same session) re-publishes a confirmed leader's address: the
  information may have been overwritten or cleared meanwhile.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

# ---------------------------------------------------------------- events


@dataclass(frozen=True)
class Granted:
    pass


@dataclass(frozen=True)
class Revoked:
    pass


@dataclass(frozen=True)
class Suspended:
    pass


@dataclass(frozen=True)
class Reconnected:
    pass


@dataclass(frozen=True)
class Lost:
    pass


@dataclass(frozen=True)
class SuspendTimeout:
    """The suspension bound armed by ``ArmSuspendTimer`` elapsed."""

    epoch: int


@dataclass(frozen=True)
class Confirmed:
    session_id: str
    address: str


@dataclass(frozen=True)
class Stop:
    pass


Event = Granted | Revoked | Suspended | Reconnected | Lost | SuspendTimeout | Confirmed | Stop

# ---------------------------------------------------------------- actions


@dataclass(frozen=True)
class GrantLeadership:
    session_id: str


@dataclass(frozen=True)
class RevokeLeadership:
    session_id: str


@dataclass(frozen=True)
class Publish:
    session_id: str
    address: str


@dataclass(frozen=True)
class Unpublish:
    """Remove the leader information, but only if it is still ours."""

    session_id: str


@dataclass(frozen=True)
class ArmSuspendTimer:
    epoch: int


@dataclass(frozen=True)
class Rejoin:
    """Enter the election again (the latch node is gone or must be given up)."""


@dataclass(frozen=True)
class Leave:
    """Give up the latch for good (stop)."""


Action = GrantLeadership | RevokeLeadership | Publish | Unpublish | ArmSuspendTimer | Rejoin | Leave


class LeaderState(enum.Enum):
    NOT_LEADER = "NOT_LEADER"
    LEADER = "LEADER"  # granted, contender not yet confirmed
    CONFIRMED = "CONFIRMED"  # confirmed; address published (unless suspended)
    STOPPED = "STOPPED"


def _new_session_id() -> str:
    return str(uuid.uuid4())


@dataclass
class LeadershipStateMachine:
    new_session_id: Callable[[], str] = _new_session_id
    state: LeaderState = LeaderState.NOT_LEADER
    session_id: str | None = None
    address: str | None = None
    suspended: bool = False
    _suspend_epoch: int = 0
    history: list[Event] = field(default_factory=list, repr=False)

    def has_leadership(self, session_id: str) -> bool:
        return self.state in (LeaderState.LEADER, LeaderState.CONFIRMED) and self.session_id == session_id

    def handle(self, event: Event) -> list[Action]:
        self.history.append(event)
        if self.state is LeaderState.STOPPED:
            return []
        if isinstance(event, Granted):
            return self._granted()
        if isinstance(event, Confirmed):
            return self._confirmed(event)
        if isinstance(event, Suspended):
            if self.suspended:
                return []
            self.suspended = True
            self._suspend_epoch += 1
            if self._is_leader():
                return [ArmSuspendTimer(self._suspend_epoch)]
            return []
        if isinstance(event, Reconnected):
            self.suspended = False
            self._suspend_epoch += 1
            if self.state is LeaderState.CONFIRMED and self.session_id and self.address is not None:
                return [Publish(self.session_id, self.address)]
            return []
        if isinstance(event, SuspendTimeout):
            if self.suspended and event.epoch == self._suspend_epoch and self._is_leader():
                return [*self._revoke(), Rejoin()]
            return []
        if isinstance(event, Lost):
            # the session is gone: the latch node and published info went with it
            self.suspended = False
            self._suspend_epoch += 1
            return [*self._revoke(publish_gone=True), Rejoin()]
        if isinstance(event, Revoked):
            return [*self._revoke(), Rejoin()]
        if isinstance(event, Stop):
            actions = self._revoke()
            self.state = LeaderState.STOPPED
            return [*actions, Leave()]
        raise TypeError(f"unknown event {event!r}")  # pragma: no cover

    # ------------------------------------------------------------ internals

    def _is_leader(self) -> bool:
        return self.state in (LeaderState.LEADER, LeaderState.CONFIRMED)

    def _granted(self) -> list[Action]:
        if self._is_leader():
            return []  # duplicate grant for the session we hold
        self.state = LeaderState.LEADER
        self.session_id = self.new_session_id()
        self.address = None
        return [GrantLeadership(self.session_id)]

    def _confirmed(self, event: Confirmed) -> list[Action]:
        if not self._is_leader() or event.session_id != self.session_id:
            return []  # a superseded session is never confirmed (Flink B9)
        self.state = LeaderState.CONFIRMED
        self.address = event.address
        if self.suspended:
            return []  # published on reconnect
        return [Publish(event.session_id, event.address)]

    def _revoke(self, publish_gone: bool = False) -> list[Action]:
        if not self._is_leader() or self.session_id is None:
            return []
        session_id = self.session_id
        was_confirmed = self.state is LeaderState.CONFIRMED
        self.state = LeaderState.NOT_LEADER
        self.session_id = None
        self.address = None
        actions: list[Action] = [RevokeLeadership(session_id)]
        if was_confirmed and not publish_gone:
            actions.append(Unpublish(session_id))
        return actions
