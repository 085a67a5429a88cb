"""The TaskExecutor's JobMaster connections, driven by events and an explicit clock (no sockets)."""

from __future__ import annotations

from flott.runtime.taskexecutor.job_table import (
    ConnectionState,
    ConnectJobMaster,
    HeartbeatAnswered,
    HeartbeatFailed,
    HeartbeatRefused,
    JobClosed,
    JobConnection,
    JobLeaderFound,
    JobTable,
    ReleaseJob,
    ResourceManagerLeaderChanged,
    SlotsAccepted,
)

LEADER = JobLeaderFound("job", "127.0.0.1:6123", "jobmaster-job", "session-1/token-a")


def test_connecting_then_registered_then_lost_when_the_job_master_refuses_a_heartbeat() -> None:
    table = JobTable(heartbeat_timeout_s=5, high_availability=False)
    assert table.handle(LEADER, 0) == [
        ConnectJobMaster(JobConnection("job", "127.0.0.1:6123", "jobmaster-job", "session-1/token-a"))
    ]
    assert table.jobs["job"].state is ConnectionState.CONNECTING
    assert table.handle(LEADER, 1) == []  # a second slot for the same JobMaster: same connection
    # before it accepted a slot, a refused heartbeat means it has not seen our offer yet
    assert table.handle(HeartbeatRefused("job", LEADER.token, "not connected"), 1) == []
    table.handle(SlotsAccepted("job", LEADER.token), 2)
    assert table.is_registered("job")
    assert table.handle(HeartbeatRefused("job", LEADER.token, "no longer connected"), 3) == [
        ReleaseJob("job", "no longer connected")
    ]
    assert table.jobs["job"].state is ConnectionState.LOST and not table.is_connected("job", LEADER.token)
    assert table.handle(HeartbeatRefused("job", LEADER.token, "again"), 4) == []  # released once
    table.handle(JobClosed("job"), 4)
    assert "job" not in table


def test_without_ha_an_unreachable_job_master_keeps_its_job() -> None:
    table = JobTable(heartbeat_timeout_s=5, high_availability=False)
    table.handle(LEADER, 0)
    table.handle(SlotsAccepted("job", LEADER.token), 0)
    assert table.handle(HeartbeatFailed("job", LEADER.token, "connection refused"), 100) == []
    assert table.is_connected("job", LEADER.token)


def test_with_ha_a_job_master_silent_past_the_heartbeat_timeout_is_lost() -> None:
    table = JobTable(heartbeat_timeout_s=5, high_availability=True)
    table.handle(LEADER, 0)
    table.handle(SlotsAccepted("job", LEADER.token), 1)
    table.handle(HeartbeatAnswered("job", LEADER.token), 3)
    assert table.handle(HeartbeatFailed("job", LEADER.token, "refused"), 8) == []  # 5 s: not past it
    assert table.handle(HeartbeatFailed("job", LEADER.token, "refused"), 8.5) == [
        ReleaseJob("job", "JobManager of job job lost: refused")
    ]


def test_a_new_job_master_replaces_the_connection_and_late_events_of_the_old_one_change_nothing() -> None:
    table = JobTable(heartbeat_timeout_s=5, high_availability=True)
    table.handle(LEADER, 0)
    table.handle(SlotsAccepted("job", LEADER.token), 0)
    new = JobLeaderFound("job", "127.0.0.1:7000", "jobmaster-job", "session-2/token-b")
    assert table.handle(new, 1) == [
        ConnectJobMaster(JobConnection("job", "127.0.0.1:7000", "jobmaster-job", "session-2/token-b"))
    ]
    assert not table.is_registered("job")  # the new JobMaster has accepted nothing yet
    assert table.handle(HeartbeatRefused("job", LEADER.token, "old"), 2) == []
    assert table.handle(HeartbeatFailed("job", LEADER.token, "old"), 100) == []
    table.handle(SlotsAccepted("job", LEADER.token), 2)
    assert not table.is_registered("job") and table.is_connected("job", new.token)


def test_a_new_resource_manager_leader_releases_the_jobs_of_other_sessions() -> None:
    table = JobTable(heartbeat_timeout_s=5, high_availability=True)
    table.handle(LEADER, 0)
    table.handle(JobLeaderFound("other", "127.0.0.1:7000", "jobmaster-other", "session-2/token-c"), 0)
    assert table.handle(ResourceManagerLeaderChanged("session-2"), 1) == [
        ReleaseJob("job", "its JobManager lost the leadership")
    ]
    assert table.is_connected("other", "session-2/token-c")
    assert table.handle(ResourceManagerLeaderChanged("session-3"), 2) == [
        ReleaseJob("other", "its JobManager lost the leadership")
    ]


def test_a_lost_job_connects_afresh_when_a_slot_request_names_its_job_master_again() -> None:
    table = JobTable(heartbeat_timeout_s=5, high_availability=False)
    table.handle(LEADER, 0)
    table.handle(SlotsAccepted("job", LEADER.token), 0)
    table.handle(HeartbeatRefused("job", LEADER.token, "written off"), 1)
    assert [type(a) for a in table.handle(LEADER, 2)] == [ConnectJobMaster]
    assert table.jobs["job"].state is ConnectionState.CONNECTING
