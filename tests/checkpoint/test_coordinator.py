"""CheckpointCoordinator lifecycle, driven by explicit events and times (no sockets, no clock).

The coordinator does no I/O: its storage actions are carried out here by :func:`settle`, the way
the JobMaster's shell does on its worker thread (in order, each outcome fed back as an event).
"""

from __future__ import annotations

from typing import Any

import pytest

from flott.errors import ConfigurationError
from flott.runtime.checkpoint.coordinator import (
    AcknowledgeCheckpoint,
    CheckpointCompleted,
    CheckpointConfig,
    CheckpointCoordinator,
    CheckpointDiscarded,
    CheckpointFailed,
    CheckpointPlan,
    DeclineCheckpoint,
    DiscardCheckpoint,
    FailJob,
    JobNotRunning,
    JobRunning,
    MetadataWriteFailed,
    MetadataWritten,
    NotifyCheckpointAborted,
    NotifyCheckpointComplete,
    RestoredFrom,
    Shutdown,
    Tick,
    TriggerCheckpoint,
    TriggerCheckpointBarrier,
    TriggerSavepoint,
    WriteCheckpointMetadata,
    perform_storage_action,
)
from flott.runtime.checkpoint.errors import CheckpointTriggerError, IllegalCheckpointTransitionError
from flott.runtime.checkpoint.metadata import (
    KeyGroupStateHandle,
    OperatorSubtaskState,
    TaskStateSnapshot,
    load_metadata,
)
from flott.runtime.checkpoint.storage import MemoryCheckpointStorage

JOB = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
PLAN = CheckpointPlan(
    tasks_to_trigger=("src-0",), tasks_to_ack={"src-0": "src", "map-0": "map", "map-1": "map"}
)


class Coordinator(CheckpointCoordinator):
    """The coordinator with its storage actions carried out at once (what the shell does, minus the
    thread): ``handle`` returns every action, the storage ones and those their outcomes caused."""

    storage: MemoryCheckpointStorage

    def handle(self, event: Any, now_ms: int) -> list[Any]:
        return settle(self, self.storage, super().handle(event, now_ms), now_ms)


def settle(coord: CheckpointCoordinator, storage: Any, actions: list[Any], now: int) -> list[Any]:
    out: list[Any] = []
    queue = list(actions)
    while queue:
        action = queue.pop(0)
        out.append(action)
        if isinstance(action, (WriteCheckpointMetadata, DiscardCheckpoint)):
            queue += CheckpointCoordinator.handle(coord, perform_storage_action(storage, action), now)
    return out


def make(**config: Any) -> tuple[Coordinator, MemoryCheckpointStorage]:
    config.setdefault("interval_ms", 1000)
    config.setdefault("checkpoints_dir", "/chk")
    storage = MemoryCheckpointStorage()
    counter = iter(range(1000))
    coord = Coordinator(JOB, CheckpointConfig(**config), random_hex=lambda n: f"{next(counter):0{2 * n}x}")
    coord.storage = storage
    return coord, storage


def without_storage(actions: list[Any]) -> list[type]:
    return [type(a) for a in actions if not isinstance(a, (WriteCheckpointMetadata, DiscardCheckpoint))]


def snapshot(execution_id: str, key_group: int) -> TaskStateSnapshot:
    sub = 0 if execution_id.endswith("0") else 1
    return TaskStateSnapshot(
        [
            OperatorSubtaskState(
                operator_id="map",
                subtask_index=sub,
                parallelism=2,
                max_parallelism=128,
                key_group_range=(0, 63) if sub == 0 else (64, 127),
                keyed_state_kinds={"count": "value"},
                key_groups=[
                    KeyGroupStateHandle(key_group, f"op-map/kg-{key_group:05d}.bin", 100, {"count": 3})
                ],
            )
        ]
        if execution_id.startswith("map")
        else []
    )


def ack_all(coord: CheckpointCoordinator, cid: int, now: int, skip: tuple[str, ...] = ()) -> list[Any]:
    actions: list[Any] = []
    for i, ex in enumerate(PLAN.tasks_to_ack):
        if ex not in skip:
            actions += coord.handle(AcknowledgeCheckpoint(cid, ex, snapshot(ex, i * 50)), now)
    return actions


def triggered(actions: list[Any]) -> TriggerCheckpointBarrier:
    (barrier,) = [a for a in actions if isinstance(a, TriggerCheckpointBarrier)]
    return barrier


def test_trigger_all_acks_completed() -> None:
    coord, storage = make()
    assert coord.handle(JobRunning(PLAN), 0) == []
    assert coord.next_wakeup() == 1000
    assert coord.handle(Tick(), 999) == []
    barrier = triggered(coord.handle(Tick(), 1000))
    assert barrier.checkpoint_id == 1 and barrier.execution_ids == ("src-0",)
    assert barrier.location == f"/chk/{JOB}/chk-1" and barrier.checkpoint_type == "CHECKPOINT"
    assert coord.handle(AcknowledgeCheckpoint(1, "src-0", snapshot("src-0", 0)), 1100) == []
    assert coord.handle(AcknowledgeCheckpoint(1, "map-0", snapshot("map-0", 3)), 1200) == []
    actions = coord.handle(AcknowledgeCheckpoint(1, "map-1", snapshot("map-1", 70)), 1300)
    assert NotifyCheckpointComplete(1, ("src-0", "map-0", "map-1")) in actions
    assert CheckpointCompleted(1, "CHECKPOINT", f"/chk/{JOB}/chk-1", None) in actions
    assert coord.pending == {}
    latest = coord.latest_completed()
    assert latest is not None and latest.checkpoint_id == 1
    meta = load_metadata(storage, f"/chk/{JOB}/chk-1")
    assert meta.checkpoint_id == 1 and not meta.is_savepoint
    (op,) = meta.operators
    assert op.operator_id == "map" and [h.key_group for h in op.key_groups] == [3, 70]
    stats = coord.checkpoint_statistics()
    assert stats["counts"] == {"restored": 0, "total": 1, "in_progress": 0, "completed": 1, "failed": 0}
    completed = stats["latest"]["completed"]
    assert completed["className"] == "completed" and completed["status"] == "COMPLETED"
    assert completed["end_to_end_duration"] == 300 and completed["state_size"] == 200
    assert completed["num_acknowledged_subtasks"] == 3 and completed["num_subtasks"] == 3
    assert completed["tasks"]["map"]["num_subtasks"] == 2 and completed["tasks"]["map"]["state_size"] == 200
    assert completed["external_path"] == f"/chk/{JOB}/chk-1" and completed["discarded"] is False
    assert stats["summary"]["end_to_end_duration"]["max"] == 300
    # The next periodic trigger is interval after the previous trigger.
    assert coord.next_wakeup() == 2000


def test_missing_ack_times_out_and_never_fails_the_job_by_default() -> None:
    coord, _ = make(timeout_ms=500)
    coord.handle(JobRunning(PLAN), 0)
    for i in range(3):
        coord.handle(Tick(), 1000 + 1000 * i)
        ack_all(coord, i + 1, 1100 + 1000 * i, skip=("map-1",))
        actions: list[Any] = coord.handle(Tick(), 1500 + 1000 * i)
        assert [type(a) for a in actions] == [DiscardCheckpoint, NotifyCheckpointAborted, CheckpointFailed]


def test_missing_ack_times_out_and_fails_the_job_when_no_failure_is_tolerated() -> None:
    coord, storage = make(timeout_ms=500, tolerable_failures=0)
    coord.handle(JobRunning(PLAN), 0)
    coord.handle(Tick(), 1000)
    ack_all(coord, 1, 1100, skip=("map-1",))
    assert coord.next_wakeup() == 1500
    actions: list[Any] = coord.handle(Tick(), 1500)
    assert without_storage(actions) == [NotifyCheckpointAborted, CheckpointFailed, FailJob]
    assert "expired" in actions[2].reason
    assert storage.deleted_dirs == [f"/chk/{JOB}/chk-1"]
    assert coord.latest_completed() is None
    stats = coord.checkpoint_statistics()
    assert stats["counts"]["failed"] == 1
    failed = stats["latest"]["failed"]
    assert failed["className"] == "failed" and failed["failure_timestamp"] == 1500
    assert failed["num_acknowledged_subtasks"] == 2
    # A late ack of the failed checkpoint is ignored.
    assert coord.handle(AcknowledgeCheckpoint(1, "map-1", snapshot("map-1", 70)), 1600) == []


def test_decline_fails_the_checkpoint() -> None:
    coord, _ = make(tolerable_failures=1)
    coord.handle(JobRunning(PLAN), 0)
    coord.handle(Tick(), 1000)
    actions: list[Any] = coord.handle(DeclineCheckpoint(1, "map-0", "state too big"), 1010)
    assert without_storage(actions) == [NotifyCheckpointAborted, CheckpointFailed]
    assert "declined by task map-0: state too big" in actions[2].reason
    assert coord.pending == {} and coord.consecutive_failures == 1


def test_tolerable_failures_counted_consecutively_and_reset_by_success() -> None:
    coord, _ = make(tolerable_failures=2, timeout_ms=100)
    coord.handle(JobRunning(PLAN), 0)
    t = 0

    def fail_one() -> list[Any]:
        nonlocal t
        t += 1000
        cid = triggered(coord.handle(Tick(), t)).checkpoint_id
        return coord.handle(DeclineCheckpoint(cid, "src-0", "boom"), t + 1)

    assert not any(isinstance(a, FailJob) for a in fail_one())
    assert not any(isinstance(a, FailJob) for a in fail_one())
    t += 1000
    cid = triggered(coord.handle(Tick(), t)).checkpoint_id
    assert any(isinstance(a, CheckpointCompleted) for a in ack_all(coord, cid, t + 10))
    assert coord.consecutive_failures == 0
    assert not any(isinstance(a, FailJob) for a in fail_one())
    assert not any(isinstance(a, FailJob) for a in fail_one())
    assert any(isinstance(a, FailJob) for a in fail_one())  # the third in a row exceeds 2


def test_retained_count_disposes_older_checkpoints() -> None:
    coord, storage = make(num_retained=2)
    coord.handle(JobRunning(PLAN), 0)
    for n in range(1, 5):
        barrier = triggered(coord.handle(Tick(), n * 1000))
        ack_all(coord, barrier.checkpoint_id, n * 1000 + 10)
    assert [c.checkpoint_id for c in coord.completed] == [3, 4]
    assert storage.deleted_dirs == [f"/chk/{JOB}/chk-1", f"/chk/{JOB}/chk-2"]
    assert not storage.exists(f"/chk/{JOB}/chk-1/_metadata")
    assert storage.exists(f"/chk/{JOB}/chk-4/_metadata")
    history = {h["id"]: h for h in coord.checkpoint_statistics()["history"]}
    assert history[1]["discarded"] and history[2]["discarded"] and not history[4]["discarded"]


def test_min_pause_and_max_concurrent() -> None:
    coord, _ = make(interval_ms=100, min_pause_ms=500, timeout_ms=10_000)
    coord.handle(JobRunning(PLAN), 0)
    assert triggered(coord.handle(Tick(), 100)).checkpoint_id == 1
    assert coord.handle(Tick(), 200) == []  # one pending: a min pause means one at a time
    ack_all(coord, 1, 250)
    assert coord.handle(Tick(), 300) == []  # 250 + 500 not reached
    assert coord.next_wakeup() == 750
    assert coord.handle(Tick(), 749) == []
    assert triggered(coord.handle(Tick(), 750)).checkpoint_id == 2

    coord, _ = make(interval_ms=100, max_concurrent=2, timeout_ms=10_000)
    coord.handle(JobRunning(PLAN), 0)
    assert triggered(coord.handle(Tick(), 100)).checkpoint_id == 1
    assert triggered(coord.handle(Tick(), 200)).checkpoint_id == 2
    assert coord.handle(Tick(), 300) == []  # two pending
    # Completing 2 subsumes pending 1 (not counted as a failure) and frees both places.
    actions = ack_all(coord, 2, 310)
    failed = [a for a in actions if isinstance(a, CheckpointFailed)]
    assert [f.checkpoint_id for f in failed] == [1] and "subsumed" in failed[0].reason
    assert coord.consecutive_failures == 0
    assert triggered(coord.handle(Tick(), 320)).checkpoint_id == 3


def test_savepoint_bypasses_schedule_and_is_never_disposed() -> None:
    coord, storage = make(interval_ms=None, num_retained=1)
    with pytest.raises(CheckpointTriggerError):
        coord.handle(TriggerSavepoint("/sp", request_id="r1"), 0)
    coord.handle(JobRunning(PLAN), 0)
    assert coord.handle(Tick(), 10_000) == []  # no periodic checkpoints configured
    with pytest.raises(ConfigurationError, match=r"state.savepoints.dir"):
        coord.handle(TriggerSavepoint(None), 0)
    barrier = triggered(coord.handle(TriggerSavepoint("/sp", request_id="r1"), 10))
    assert barrier.checkpoint_type == "SAVEPOINT"
    assert barrier.location == f"/sp/savepoint-{JOB[:6]}-000000000000"
    actions = ack_all(coord, barrier.checkpoint_id, 20)
    assert CheckpointCompleted(1, "SAVEPOINT", barrier.location, "r1") in actions
    assert coord.completed == []  # savepoints are not in the checkpoint store
    assert load_metadata(storage, barrier.location).is_savepoint
    manual = triggered(coord.handle(TriggerCheckpoint("m"), 30))
    ack_all(coord, manual.checkpoint_id, 40)
    assert storage.exists(barrier.location + "/_metadata")
    stats = coord.checkpoint_statistics()
    assert stats["latest"]["savepoint"]["is_savepoint"] is True
    assert stats["latest"]["completed"]["id"] == 2


def test_savepoint_failure_does_not_count_and_sync_savepoint_pauses_periodic() -> None:
    coord, _ = make(interval_ms=100, timeout_ms=10_000)
    coord.handle(JobRunning(PLAN), 0)
    sp = triggered(coord.handle(TriggerSavepoint("/sp", sync=True), 50))
    assert sp.checkpoint_type == "SYNC_SAVEPOINT"
    assert coord.handle(Tick(), 100) == []  # periodic paused during stop-with-savepoint
    actions = coord.handle(DeclineCheckpoint(sp.checkpoint_id, "map-1", "nope"), 120)
    assert not any(isinstance(a, FailJob) for a in actions)  # savepoint failures are not counted
    assert coord.next_wakeup() == 220  # periodic resumes (H7)
    assert triggered(coord.handle(Tick(), 220)).checkpoint_type == "CHECKPOINT"


def test_job_not_running_aborts_pending_without_counting() -> None:
    coord, _ = make()
    coord.handle(JobRunning(PLAN), 0)
    coord.handle(Tick(), 1000)
    actions = coord.handle(JobNotRunning("task failed"), 1100)
    assert without_storage(actions) == [CheckpointFailed]
    assert coord.consecutive_failures == 0 and coord.next_wakeup() is None
    assert coord.handle(Tick(), 5000) == []
    with pytest.raises(CheckpointTriggerError):
        coord.handle(TriggerSavepoint("/sp"), 5000)
    coord.handle(RestoredFrom(7, f"/chk/{JOB}/chk-7", False), 5100)
    coord.handle(JobRunning(PLAN), 5100)
    assert triggered(coord.handle(Tick(), 6100)).checkpoint_id == 8
    assert coord.checkpoint_statistics()["latest"]["restored"]["id"] == 7


def test_illegal_transitions_are_typed_errors() -> None:
    coord, _ = make()
    with pytest.raises(IllegalCheckpointTransitionError):
        coord.handle(AcknowledgeCheckpoint(1, "src-0"), 0)  # never triggered
    coord.handle(JobRunning(PLAN), 0)
    with pytest.raises(IllegalCheckpointTransitionError):
        coord.handle(JobRunning(PLAN), 0)
    coord.handle(Tick(), 1000)
    with pytest.raises(IllegalCheckpointTransitionError):
        coord.handle(AcknowledgeCheckpoint(1, "stranger"), 1001)
    coord.handle(AcknowledgeCheckpoint(1, "src-0"), 1001)
    with pytest.raises(IllegalCheckpointTransitionError):
        coord.handle(AcknowledgeCheckpoint(1, "src-0"), 1002)
    with pytest.raises(IllegalCheckpointTransitionError):
        bad_plan = CheckpointPlan(("a",), {"b": "v"})
        CheckpointCoordinator(JOB, CheckpointConfig()).handle(JobRunning(bad_plan), 0)
    assert without_storage(coord.handle(Shutdown(), 2000)) == [CheckpointFailed]
    assert coord.handle(Tick(), 3000) == []
    with pytest.raises(IllegalCheckpointTransitionError):
        coord.handle(TriggerSavepoint("/sp"), 3000)


def test_duplicate_key_group_fails_the_checkpoint() -> None:
    coord, _ = make(tolerable_failures=5)
    coord.handle(JobRunning(PLAN), 0)
    coord.handle(Tick(), 1000)
    coord.handle(AcknowledgeCheckpoint(1, "src-0"), 1001)
    coord.handle(AcknowledgeCheckpoint(1, "map-0", snapshot("map-0", 5)), 1002)
    actions = coord.handle(AcknowledgeCheckpoint(1, "map-1", snapshot("map-1", 5)), 1003)
    failed = [a for a in actions if isinstance(a, CheckpointFailed)]
    assert len(failed) == 1 and "key group 5 snapshotted twice" in failed[0].reason


def test_config_from_flink_keys() -> None:
    cfg = CheckpointConfig.from_config(
        {
            "execution.checkpointing.interval": "5 s",
            "execution.checkpointing.timeout": "1 min",
            "execution.checkpointing.min-pause": "200 ms",
            "execution.checkpointing.max-concurrent-checkpoints": "2",
            "execution.checkpointing.tolerable-failed-checkpoints": "3",
            "state.checkpoints.num-retained": "4",
            "state.checkpoints.dir": "file:///tmp/chk",
            "state.savepoints.dir": "/tmp/sp",
        }
    )
    assert cfg == CheckpointConfig(5000, 60_000, 200, 2, 3, 4, "file:///tmp/chk", "/tmp/sp")
    assert CheckpointConfig.from_config({}).interval_ms is None
    with pytest.raises(ConfigurationError):
        CheckpointConfig.from_config({"execution.checkpointing.max-concurrent-checkpoints": "x"})


def raw(**config: Any) -> CheckpointCoordinator:
    """A coordinator whose storage actions nobody carries out (the test plays the shell)."""
    config.setdefault("interval_ms", 1000)
    config.setdefault("checkpoints_dir", "/chk")
    return CheckpointCoordinator(JOB, CheckpointConfig(**config), random_hex=lambda n: "0" * 2 * n)


def ack_raw(coord: CheckpointCoordinator, cid: int, now: int) -> list[Any]:
    actions: list[Any] = []
    for i, ex in enumerate(PLAN.tasks_to_ack):
        actions += coord.handle(AcknowledgeCheckpoint(cid, ex, snapshot(ex, i * 50)), now)
    return actions


def test_the_last_ack_asks_for_the_metadata_write_and_completion_waits_for_it() -> None:
    """No I/O in the coordinator: the write is an action, completion the event that answers it."""
    coord = raw()
    coord.handle(JobRunning(PLAN), 0)
    coord.handle(Tick(), 1000)
    (write,) = ack_raw(coord, 1, 1100)
    assert isinstance(write, WriteCheckpointMetadata)
    assert write.location == f"/chk/{JOB}/chk-1" and write.metadata.checkpoint_id == 1
    assert coord.latest_completed() is None and 1 in coord.pending  # FINALIZING
    # A finalizing checkpoint does not expire while its write is under way, and a late decline of
    # it changes nothing.
    assert coord.next_wakeup() is None
    assert coord.handle(Tick(), 1000 + 600_001) == []
    assert 1 in coord.pending
    assert coord.handle(DeclineCheckpoint(1, "map-0", "late"), 1200) == []
    storage = MemoryCheckpointStorage()
    assert perform_storage_action(storage, write) == MetadataWritten(1)
    assert load_metadata(storage, write.location).checkpoint_id == 1
    actions = coord.handle(MetadataWritten(1), 1300)
    assert [type(a) for a in actions] == [NotifyCheckpointComplete, CheckpointCompleted]
    latest = coord.latest_completed()
    assert latest is not None and latest.checkpoint_id == 1
    # Flink's end-to-end duration runs from the trigger to the last acknowledgement.
    assert coord.checkpoint_statistics()["latest"]["completed"]["end_to_end_duration"] == 100


def test_metadata_write_failure_fails_the_checkpoint_and_discards_its_directory() -> None:
    coord = raw(tolerable_failures=0)
    coord.handle(JobRunning(PLAN), 0)
    coord.handle(Tick(), 1000)
    (write,) = ack_raw(coord, 1, 1100)
    actions = coord.handle(MetadataWriteFailed(1, "Failure to finalize checkpoint: disk full"), 1200)
    assert actions[0] == DiscardCheckpoint(1, write.location)
    assert [type(a) for a in actions[1:]] == [NotifyCheckpointAborted, CheckpointFailed, FailJob]
    assert coord.latest_completed() is None
    assert coord.checkpoint_statistics()["counts"]["failed"] == 1


def test_job_stopping_while_finalizing_aborts_and_a_late_write_result_is_ignored() -> None:
    coord = raw()
    coord.handle(JobRunning(PLAN), 0)
    coord.handle(Tick(), 1000)
    (write,) = ack_raw(coord, 1, 1100)
    actions = coord.handle(JobNotRunning("task failed"), 1150)
    # The discard is emitted after the write: the shell's ordered queue deletes what it wrote.
    assert actions == [
        DiscardCheckpoint(1, write.location),
        CheckpointFailed(1, "CHECKPOINT", "job not running: task failed", None),
    ]
    assert coord.handle(MetadataWritten(1), 1200) == []
    assert coord.latest_completed() is None


def test_retained_checkpoints_are_discarded_by_actions_in_order() -> None:
    coord = raw(num_retained=1)
    coord.handle(JobRunning(PLAN), 0)
    for n in (1, 2):
        coord.handle(Tick(), n * 1000)
        ack_raw(coord, n, n * 1000 + 10)
        actions = coord.handle(MetadataWritten(n), n * 1000 + 20)
    assert actions[0] == DiscardCheckpoint(1, f"/chk/{JOB}/chk-1")
    assert coord.handle(CheckpointDiscarded(f"/chk/{JOB}/chk-1", "permission denied"), 2100) == []
    assert any("could not dispose" in h for h in coord.history)


def test_storage_outcomes_for_unknown_checkpoints_are_typed_errors() -> None:
    coord = raw()
    coord.handle(JobRunning(PLAN), 0)
    with pytest.raises(IllegalCheckpointTransitionError):
        coord.handle(MetadataWritten(1), 10)  # never triggered
    coord.handle(Tick(), 1000)
    with pytest.raises(IllegalCheckpointTransitionError):
        coord.handle(MetadataWritten(1), 1010)  # not every task acknowledged: nothing was written
