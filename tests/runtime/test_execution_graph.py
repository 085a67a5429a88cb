"""The ExecutionGraph state machine, driven by events alone (no sockets, no clock)."""

from __future__ import annotations

import pytest

from flott.common.job_status import JobStatus
from flott.errors import IllegalStateTransitionError
from flott.runtime.jobgraph import (
    JobEdge,
    JobGraph,
    JobVertex,
    OperatorDescriptor,
    PartitionerDescriptor,
    new_id,
)
from flott.runtime.jobmaster.deployment import build_deployment
from flott.runtime.jobmaster.execution_graph import (
    CancelJob,
    CancelTask,
    DeployTasks,
    ExecutionGraph,
    JobStatusChanged,
    RequestSlots,
    SlotAssigned,
    StartScheduling,
    TaskExecutorLost,
    TaskStateChanged,
)
from flott.runtime.messages.execution import ExecutionState
from flott.runtime.rpc.service import WireError


def two_vertex_graph(p_src: int = 2, p_sink: int = 2) -> JobGraph:
    src = JobVertex(
        new_id(), "Source", p_src, 128, [OperatorDescriptor("a" * 32, "Source", "source", function="f")]
    )
    snk = JobVertex(
        new_id(),
        "Reduce",
        p_sink,
        128,
        [OperatorDescriptor("b" * 32, "Reduce", "reduce", function="f", key_selector="k")],
    )
    edge = JobEdge(new_id(), src.id, snk.id, PartitionerDescriptor("hash", "k"))
    return JobGraph(new_id(), "test", [src, snk], [edge], user_artifacts={"f": b"x", "k": b"y"})


def running_graph() -> tuple[ExecutionGraph, list]:
    eg = ExecutionGraph(two_vertex_graph())
    actions = eg.handle(StartScheduling(), 1)
    assert RequestSlots(2) in actions
    eg.handle(SlotAssigned(0, "te-0", "alloc-0"), 2)
    actions = eg.handle(SlotAssigned(1, "te-1", "alloc-1"), 3)
    return eg, actions


def test_all_tasks_finished_finishes_job() -> None:
    eg, actions = running_graph()
    [deploy] = [a for a in actions if isinstance(a, DeployTasks)]
    assert len(deploy.execution_ids) == 4
    for eid in deploy.execution_ids:
        eg.handle(TaskStateChanged(eid, ExecutionState.RUNNING), 4)
    out = []
    for eid in deploy.execution_ids:
        out += eg.handle(TaskStateChanged(eid, ExecutionState.FINISHED), 5)
    assert eg.status is JobStatus.FINISHED
    assert [a.new for a in out if isinstance(a, JobStatusChanged)] == [JobStatus.FINISHED]


def test_task_failure_cancels_others_then_fails_job_with_cause() -> None:
    eg, actions = running_graph()
    ids = next(a for a in actions if isinstance(a, DeployTasks)).execution_ids
    for eid in ids:
        eg.handle(TaskStateChanged(eid, ExecutionState.RUNNING), 4)
    err = WireError(type="UserCodeError", message="ValueError: boom", exception_type="ValueError")
    out = eg.handle(TaskStateChanged(ids[0], ExecutionState.FAILED, err), 5)
    assert eg.status is JobStatus.FAILING
    cancels = [a for a in out if isinstance(a, CancelTask)]
    assert {c.execution_id for c in cancels} == set(ids[1:])
    for eid in ids[1:]:
        eg.handle(TaskStateChanged(eid, ExecutionState.CANCELED), 6)
    assert eg.status is JobStatus.FAILED
    assert eg.failure is not None and eg.failure.exception_type == "ValueError"


def test_lost_task_executor_fails_job() -> None:
    eg, actions = running_graph()
    ids = next(a for a in actions if isinstance(a, DeployTasks)).execution_ids
    for eid in ids:
        eg.handle(TaskStateChanged(eid, ExecutionState.RUNNING), 4)
    out = eg.handle(TaskExecutorLost("te-1", "process killed by signal 9"), 5)
    assert eg.status is JobStatus.FAILING
    for a in out:
        if isinstance(a, CancelTask):
            eg.handle(TaskStateChanged(a.execution_id, ExecutionState.CANCELED), 6)
    assert eg.status is JobStatus.FAILED
    assert eg.failure is not None and "signal 9" in eg.failure.message
    assert eg.failure.type == "TaskExecutorLostError"


def test_cancel_before_slots_cancels_at_once() -> None:
    eg = ExecutionGraph(two_vertex_graph())
    eg.handle(StartScheduling(), 1)
    eg.handle(CancelJob(), 2)
    assert eg.status is JobStatus.CANCELED


def test_illegal_transition_raises_typed_error() -> None:
    eg, actions = running_graph()
    ids = next(a for a in actions if isinstance(a, DeployTasks)).execution_ids
    eg.handle(TaskStateChanged(ids[0], ExecutionState.RUNNING), 4)
    with pytest.raises(IllegalStateTransitionError):
        eg._transition_execution(eg.executions[ids[0]], ExecutionState.SCHEDULED, 5)


def test_deployment_wires_all_to_all_hash_edge() -> None:
    eg, _actions = running_graph()
    addresses = {"te-0": "127.0.0.1:1000", "te-1": "127.0.0.1:1001"}
    sink_vertex = eg.job_graph.vertices[1]
    consumer = eg.by_vertex[sink_vertex.id][1]
    tdd = build_deployment(eg, consumer, addresses)
    [gate] = tdd.input_gates
    assert [c.subpartition_index for c in gate.channels] == [1, 1]
    assert {c.producer_address for c in gate.channels} == set(addresses.values())
    producer = eg.by_vertex[eg.job_graph.vertices[0].id][0]
    ptdd = build_deployment(eg, producer, addresses)
    assert ptdd.output_partitions[0].num_subpartitions == 2
    assert set(ptdd.artifacts) == {"f", "k"}


# -- restarts ---------------------------------------------------------------------------------


def restarting_graph(policy: object) -> tuple[ExecutionGraph, list]:
    from flott.runtime.executiongraph.failover.restart_backoff_time_strategy import is_recoverable

    eg = ExecutionGraph(
        two_vertex_graph(), restart_policy=policy, is_recoverable=is_recoverable  # type: ignore[arg-type]
    )
    eg.handle(StartScheduling(), 1)
    eg.handle(SlotAssigned(0, "te-0", "alloc-0"), 2)
    actions = eg.handle(SlotAssigned(1, "te-1", "alloc-1"), 3)
    for ex in list(eg.executions.values()):
        eg.handle(TaskStateChanged(ex.execution_id, ExecutionState.RUNNING), 4)
    return eg, actions


def test_task_failure_restarts_every_subtask_after_the_backoff() -> None:
    from flott.runtime.executiongraph.failover.restart_backoff_time_strategy import (
        FixedDelayRestartBackoffTimeStrategy,
    )
    from flott.runtime.jobmaster.execution_graph import RestartJob, ScheduleRestart

    eg, _ = restarting_graph(FixedDelayRestartBackoffTimeStrategy(1, 500))
    first = list(eg.executions)
    failed, *others = first
    boom = WireError("UserCodeError", "boom")
    actions = eg.handle(TaskStateChanged(failed, ExecutionState.FAILED, boom), 10)
    assert eg.status is JobStatus.RESTARTING
    assert {a.execution_id for a in actions if isinstance(a, CancelTask)} == set(others)
    assert not any(isinstance(a, ScheduleRestart) for a in actions), "waits for the cancellations"
    for i, eid in enumerate(others):
        actions = eg.handle(TaskStateChanged(eid, ExecutionState.CANCELED), 11 + i)
    assert actions == [ScheduleRestart(500)]
    actions = eg.handle(RestartJob(), 600)
    assert eg.status is JobStatus.RUNNING and eg.num_restarts == 1
    [deploy] = [a for a in actions if isinstance(a, DeployTasks)]
    assert set(deploy.execution_ids) == set(eg.executions) and not set(eg.executions) & set(first)
    assert all(ex.attempt_number == 1 for ex in eg.executions.values())
    # A late report of the previous attempt changes nothing.
    assert eg.handle(TaskStateChanged(failed, ExecutionState.CANCELED), 700) == []
    # The strategy allowed one restart: the next failure fails the job with its cause.
    ex = next(iter(eg.executions))
    eg.handle(TaskStateChanged(ex, ExecutionState.FAILED, WireError("UserCodeError", "again")), 800)
    assert eg.status is JobStatus.FAILING


def test_lost_task_executor_restart_asks_for_replacement_slots() -> None:
    from flott.runtime.executiongraph.failover.restart_backoff_time_strategy import (
        FixedDelayRestartBackoffTimeStrategy,
    )
    from flott.runtime.jobmaster.execution_graph import RestartJob

    eg, _ = restarting_graph(FixedDelayRestartBackoffTimeStrategy(3, 0))
    eg.handle(TaskExecutorLost("te-1", "killed"), 10)
    for ex in eg.executions.values():
        if not ex.state.is_terminal():
            eg.handle(TaskStateChanged(ex.execution_id, ExecutionState.CANCELED), 11)
    actions = eg.handle(RestartJob(), 12)
    assert RequestSlots(1) in actions, "te-0's slot is kept, te-1's must be replaced"
    actions = eg.handle(SlotAssigned(1, "te-2", "alloc-2"), 13)
    assert any(isinstance(a, DeployTasks) for a in actions)


def test_unrecoverable_failure_fails_the_job_despite_the_strategy() -> None:
    from flott.runtime.executiongraph.failover.restart_backoff_time_strategy import (
        FixedDelayRestartBackoffTimeStrategy,
    )

    eg, _ = restarting_graph(FixedDelayRestartBackoffTimeStrategy(5, 0))
    ex = next(iter(eg.executions))
    eg.handle(TaskStateChanged(ex, ExecutionState.FAILED, WireError("ConfigurationError", "bad key")), 10)
    assert eg.status is JobStatus.FAILING


def test_cancel_during_restart_backoff_cancels_the_job() -> None:
    from flott.runtime.executiongraph.failover.restart_backoff_time_strategy import (
        FixedDelayRestartBackoffTimeStrategy,
    )
    from flott.runtime.jobmaster.execution_graph import RestartJob

    eg, _ = restarting_graph(FixedDelayRestartBackoffTimeStrategy(5, 1000))
    eg.handle(TaskExecutorLost("te-0", "killed"), 10)
    eg.handle(TaskExecutorLost("te-1", "killed"), 11)
    eg.handle(CancelJob(), 12)
    assert eg.status is JobStatus.CANCELED
    assert eg.handle(RestartJob(), 1100) == [], "the pending restart is void"


def test_slot_lost_while_still_collecting_slots_is_asked_for_again() -> None:
    eg = ExecutionGraph(two_vertex_graph())
    eg.handle(StartScheduling(), 1)
    eg.handle(SlotAssigned(0, "te-0", "alloc-0"), 2)
    assert eg.handle(TaskExecutorLost("te-0", "killed"), 3) == [RequestSlots(1)]
    eg.handle(SlotAssigned(0, "te-2", "alloc-2"), 4)
    actions = eg.handle(SlotAssigned(1, "te-1", "alloc-1"), 5)
    assert any(isinstance(a, DeployTasks) for a in actions)


def test_checkpoints_stop_reason_names_the_tasks_that_are_not_running() -> None:
    from flott.runtime.jobmaster.checkpointing import why_checkpoints_stop

    eg, actions = running_graph()
    ids = next(a for a in actions if isinstance(a, DeployTasks)).execution_ids
    for eid in ids:
        eg.handle(TaskStateChanged(eid, ExecutionState.RUNNING), 4)
    eg.handle(TaskStateChanged(ids[0], ExecutionState.FINISHED), 5)
    assert eg.status is JobStatus.RUNNING
    assert why_checkpoints_stop(eg) == "not all tasks are running (1 FINISHED of 4)"
    eg.handle(CancelJob(), 6)
    assert why_checkpoints_stop(eg) == "job is CANCELLING"
