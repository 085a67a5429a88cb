"""The exception history and prior attempts the ExecutionGraph keeps, and how REST sees them.

Pure: the graph is driven by events, the archive built from it without a cluster.
"""

from __future__ import annotations

from flott.common.job_status import JobStatus
from flott.runtime.executiongraph.failover.restart_backoff_time_strategy import (
    ExponentialDelayRestartBackoffTimeStrategy,
    FailureRateRestartBackoffTimeStrategy,
    FixedDelayRestartBackoffTimeStrategy,
    NoRestartBackoffTimeStrategy,
    java_duration,
    web_description,
)
from flott.runtime.jobmaster.execution_graph import (
    ATTEMPTS_HISTORY_SIZE,
    ExecutionGraph,
    GlobalFailure,
    RestartJob,
    SlotAssigned,
    TaskExecutorLost,
    TaskStateChanged,
)
from flott.runtime.jobmaster.failure_history import exception_history, prior_attempts
from flott.runtime.messages.execution import ExecutionState
from flott.runtime.rpc.service import WireError
from tests.runtime.test_execution_graph import restarting_graph

ENDPOINTS = {"te-0": "10.0.0.1:6121", "te-1": "10.0.0.2:6121"}


def _finish_restart(eg: ExecutionGraph, now: int) -> None:
    for ex in eg.executions.values():
        if not ex.state.is_terminal():
            eg.handle(TaskStateChanged(ex.execution_id, ExecutionState.CANCELED), now)
    eg.handle(RestartJob(), now + 1)
    for slot in range(eg.slots_needed):
        if slot not in eg.slots:  # a replacement TaskExecutor at the same address
            eg.handle(SlotAssigned(slot, f"te-{slot}", f"alloc-{slot}-{now}"), now + 1)
    for ex in eg.executions.values():
        eg.handle(TaskStateChanged(ex.execution_id, ExecutionState.RUNNING), now + 2)


def test_a_lost_task_executor_is_one_entry_whose_other_tasks_are_concurrent() -> None:
    eg, _ = restarting_graph(FixedDelayRestartBackoffTimeStrategy(3, 0))
    on_te1 = sorted(
        (ex for ex in eg.executions.values() if ex.resource_id == "te-1"), key=lambda e: e.vertex_id
    )
    assert len(on_te1) == 2, "slot sharing: one subtask of each vertex on te-1"
    eg.handle(TaskExecutorLost("te-1", "heartbeat of TaskManager te-1 timed out"), 10)
    _finish_restart(eg, 20)
    assert eg.status is JobStatus.RUNNING and eg.num_restarts == 1

    [entry] = exception_history(eg, eg.job_graph, ENDPOINTS)
    assert entry.error.type == "TaskExecutorLostError" and "timed out" in entry.error.message
    assert entry.timestamp == 10
    assert entry.resource_id == "te-1" and entry.endpoint == "10.0.0.2:6121"
    names = {entry.task_name} | {c.task_name for c in entry.concurrent}
    assert names == {"Source (2/2)", "Reduce (2/2)"}
    assert [c.resource_id for c in entry.concurrent] == ["te-1"]


def test_each_failover_adds_an_entry_newest_first_and_keeps_prior_attempts() -> None:
    eg, _ = restarting_graph(FixedDelayRestartBackoffTimeStrategy(5, 0))
    first = next(iter(eg.executions.values()))
    eg.handle(
        TaskStateChanged(first.execution_id, ExecutionState.FAILED, WireError("UserCodeError", "one")), 10
    )
    _finish_restart(eg, 20)
    eg.handle(GlobalFailure(WireError("CheckpointError", "too many failed checkpoints")), 30)
    _finish_restart(eg, 40)

    entries = exception_history(eg, eg.job_graph, ENDPOINTS)
    assert [e.error.message for e in entries] == ["too many failed checkpoints", "one"]
    assert entries[0].task_name == "" and entries[0].endpoint == "", "a global failure has no task"
    assert entries[1].task_name == "Source (1/2)" and entries[1].endpoint == "10.0.0.1:6121"

    attempts = prior_attempts(eg, first.vertex_id, {}, ENDPOINTS)
    mine = [a for a in attempts if a.subtask_index == first.subtask_index]
    assert [(a.attempt_number, a.state) for a in mine] == [(0, "FAILED"), (1, "CANCELED")]
    assert mine[0].failure is not None and mine[0].endpoint == "10.0.0.1:6121"


def test_prior_attempts_are_bounded() -> None:
    eg, _ = restarting_graph(FixedDelayRestartBackoffTimeStrategy(100, 0))
    for i in range(ATTEMPTS_HISTORY_SIZE + 3):
        eg.handle(GlobalFailure(WireError("CheckpointError", f"f{i}")), 10 * i)
        _finish_restart(eg, 10 * i + 1)
    assert all(len(kept) == ATTEMPTS_HISTORY_SIZE for kept in eg.prior_attempts.values())
    assert min(ex.attempt_number for kept in eg.prior_attempts.values() for ex in kept) == 3


def test_the_echo_of_a_broken_channel_gives_way_to_the_real_cause() -> None:
    eg, _ = restarting_graph(FixedDelayRestartBackoffTimeStrategy(3, 0))
    a, b = list(eg.executions.values())[:2]
    eg.handle(
        TaskStateChanged(b.execution_id, ExecutionState.FAILED, WireError("DataExchangeError", "gone")), 10
    )
    eg.handle(TaskStateChanged(a.execution_id, ExecutionState.FAILED, WireError("UserCodeError", "boom")), 11)
    [entry] = exception_history(eg, eg.job_graph, ENDPOINTS)
    assert entry.error.message == "boom" and entry.timestamp == 10
    assert [c.error.message for c in entry.concurrent] == ["gone"]


def test_strategies_are_described_as_flinks_web_ui_does() -> None:
    assert java_duration(0) == "PT0S"
    assert java_duration(100) == "PT0.1S"
    assert java_duration(10_000) == "PT10S"
    assert java_duration(90_500) == "PT1M30.5S"
    assert java_duration(3_600_000) == "PT1H"
    assert web_description(NoRestartBackoffTimeStrategy()) == "Restart deactivated."
    assert web_description(None) == "Restart deactivated."
    assert (
        web_description(FixedDelayRestartBackoffTimeStrategy(3, 10_000))
        == "Restart with fixed delay (PT10S). #3 restart attempts."
    )
    assert web_description(FailureRateRestartBackoffTimeStrategy(1, 60_000, 1_000)) == (
        "Failure rate restart with maximum of 1 failures within interval PT1M and fixed delay PT1S."
    )
    assert web_description(
        ExponentialDelayRestartBackoffTimeStrategy(1_000, 60_000, 1.5, 3_600_000, 0.1)
    ) == (
        "Restart with exponential delay: starting at PT1S, increasing by 1.500000, with maximum PT1M. "
        "Delay resets after PT1H with jitter 0.100000"
    )


def test_a_lost_task_executor_reported_after_its_echo_is_the_root_cause() -> None:
    eg, _ = restarting_graph(FixedDelayRestartBackoffTimeStrategy(3, 0))
    downstream = next(ex for ex in eg.executions.values() if ex.resource_id == "te-0")
    echo = WireError("DataExchangeError", "connection to 10.0.0.2:6121 reset")
    eg.handle(TaskStateChanged(downstream.execution_id, ExecutionState.FAILED, echo), 10)
    eg.handle(TaskExecutorLost("te-1", "heartbeat of TaskManager te-1 timed out"), 15)
    [entry] = exception_history(eg, eg.job_graph, ENDPOINTS)
    assert entry.error.type == "TaskExecutorLostError" and entry.resource_id == "te-1"
    assert entry.timestamp == 10, "the failover began with the first report"
    assert "DataExchangeError" in {c.error.type for c in entry.concurrent}
