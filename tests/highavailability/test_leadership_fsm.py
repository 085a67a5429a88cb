"""The pure leadership state machine, no sockets."""

from __future__ import annotations

import itertools

from flott.runtime.highavailability import leadership as lm


def fsm() -> lm.LeadershipStateMachine:
    ids = (f"s{i}" for i in itertools.count(1))
    return lm.LeadershipStateMachine(new_session_id=lambda: next(ids))


def test_grant_then_publish_only_after_confirmation() -> None:
    m = fsm()
    assert m.handle(lm.Granted()) == [lm.GrantLeadership("s1")]
    assert m.state is lm.LeaderState.LEADER and m.has_leadership("s1")
    assert m.handle(lm.Granted()) == []  # duplicate grant
    assert m.handle(lm.Confirmed("s1", "addr-1")) == [lm.Publish("s1", "addr-1")]
    assert m.state is lm.LeaderState.CONFIRMED


def test_stale_confirmation_is_ignored() -> None:
    m = fsm()
    m.handle(lm.Granted())
    m.handle(lm.Lost())
    m.handle(lm.Granted())
    assert m.session_id == "s2"
    assert m.handle(lm.Confirmed("s1", "old")) == []
    assert not m.has_leadership("s1")
    assert m.handle(lm.Confirmed("s2", "new")) == [lm.Publish("s2", "new")]


def test_confirmation_before_grant_is_ignored() -> None:
    m = fsm()
    assert m.handle(lm.Confirmed("s1", "a")) == []


def test_suspension_does_not_revoke_and_reconnect_republishes() -> None:
    m = fsm()
    m.handle(lm.Granted())
    m.handle(lm.Confirmed("s1", "a"))
    actions = m.handle(lm.Suspended())
    assert actions == [lm.ArmSuspendTimer(1)]
    assert m.has_leadership("s1")
    assert m.handle(lm.Suspended()) == []  # repeated
    assert m.handle(lm.Reconnected()) == [lm.Publish("s1", "a")]
    # the timer armed for the old suspension is stale now
    assert m.handle(lm.SuspendTimeout(1)) == []
    assert m.has_leadership("s1")


def test_suspension_beyond_bound_revokes_and_rejoins() -> None:
    m = fsm()
    m.handle(lm.Granted())
    m.handle(lm.Confirmed("s1", "a"))
    (arm,) = m.handle(lm.Suspended())
    assert isinstance(arm, lm.ArmSuspendTimer)
    assert m.handle(lm.SuspendTimeout(arm.epoch)) == [
        lm.RevokeLeadership("s1"),
        lm.Unpublish("s1"),
        lm.Rejoin(),
    ]
    assert m.state is lm.LeaderState.NOT_LEADER and not m.has_leadership("s1")


def test_confirmation_while_suspended_is_published_on_reconnect() -> None:
    m = fsm()
    m.handle(lm.Granted())
    m.handle(lm.Suspended())
    assert m.handle(lm.Confirmed("s1", "a")) == []
    assert m.handle(lm.Reconnected()) == [lm.Publish("s1", "a")]


def test_suspension_of_a_non_leader_arms_nothing() -> None:
    m = fsm()
    assert m.handle(lm.Suspended()) == []
    assert m.handle(lm.Reconnected()) == []


def test_lost_session_revokes_without_unpublish() -> None:
    m = fsm()
    m.handle(lm.Granted())
    m.handle(lm.Confirmed("s1", "a"))
    m.handle(lm.Suspended())
    assert m.handle(lm.Lost()) == [lm.RevokeLeadership("s1"), lm.Rejoin()]
    assert not m.suspended
    assert m.handle(lm.Granted()) == [lm.GrantLeadership("s2")]


def test_lost_when_not_leader_only_rejoins() -> None:
    assert fsm().handle(lm.Lost()) == [lm.Rejoin()]


def test_latch_node_removed_revokes() -> None:
    m = fsm()
    m.handle(lm.Granted())
    assert m.handle(lm.Revoked()) == [lm.RevokeLeadership("s1"), lm.Rejoin()]


def test_stop_revokes_unpublishes_and_ignores_later_events() -> None:
    m = fsm()
    m.handle(lm.Granted())
    m.handle(lm.Confirmed("s1", "a"))
    assert m.handle(lm.Stop()) == [lm.RevokeLeadership("s1"), lm.Unpublish("s1"), lm.Leave()]
    assert m.handle(lm.Granted()) == []
    assert m.state is lm.LeaderState.STOPPED


def test_unconfirmed_leader_revoked_does_not_unpublish() -> None:
    m = fsm()
    m.handle(lm.Granted())
    assert m.handle(lm.Stop()) == [lm.RevokeLeadership("s1"), lm.Leave()]
