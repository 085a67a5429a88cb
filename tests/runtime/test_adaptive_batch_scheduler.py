"""Flink's adaptive batch scheduler rules, without sockets: the decider (bytes → parallelism),
the plan of a job (configured vertices, forward groups, sources, data layout) and the staged
scheduling the ExecutionGraph does with it (blocking exchanges, slots asked for as needed)."""

from __future__ import annotations

import msgspec
import pytest

from flott.common.job_status import JobStatus
from flott.errors import ConfigurationError
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
    DeployTasks,
    ExecutionGraph,
    ReleasePartitions,
    RequestSlots,
    RestartJob,
    ScheduleRestart,
    SlotAssigned,
    StartScheduling,
    TaskExecutorLost,
    TaskStateChanged,
)
from flott.runtime.messages.execution import ExecutionState
from flott.runtime.scheduler.adaptivebatch.adaptive_batch_plan import AdaptiveBatchPlan
from flott.runtime.scheduler.adaptivebatch.vertex_parallelism_decider import (
    AdaptiveBatchSettings,
    ConsumedResult,
    consumed_subpartitions,
    decide_parallelism,
)

MIB = 1 << 20
SETTINGS = AdaptiveBatchSettings(max_parallelism=8, default_source_parallelism=8)

# -- the decider ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("num_bytes", "expected"),
    [(0, 1), (1, 1), (16 * MIB, 1), (16 * MIB + 1, 2), (50 * MIB, 4), (1000 * MIB, 8)],
)
def test_parallelism_is_bytes_over_the_volume_per_task_clamped(num_bytes: int, expected: int) -> None:
    assert decide_parallelism(SETTINGS, [ConsumedResult(num_bytes, 8)], 128) == expected


def test_all_inputs_count_but_broadcast_ones() -> None:
    consumed = [ConsumedResult(10 * MIB, 8), ConsumedResult(10 * MIB, 8), ConsumedResult(900 * MIB, 8, True)]
    assert decide_parallelism(SETTINGS, consumed, 128) == 2
    assert decide_parallelism(SETTINGS, [ConsumedResult(900 * MIB, 8, True)], 128) == 1  # only broadcast: min


def test_min_parallelism_and_the_vertex_max_parallelism_clamp() -> None:
    settings = AdaptiveBatchSettings(min_parallelism=3, max_parallelism=8)
    assert decide_parallelism(settings, [ConsumedResult(1, 8)], 128) == 3
    assert decide_parallelism(settings, [ConsumedResult(1, 2)], 2) == 2  # vertex max below the min wins
    assert decide_parallelism(SETTINGS, [ConsumedResult(1000 * MIB, 4)], 4) == 4


def test_sources_get_the_default_source_parallelism_within_their_max() -> None:
    assert decide_parallelism(AdaptiveBatchSettings(default_source_parallelism=3), [], 128) == 3
    assert decide_parallelism(AdaptiveBatchSettings(default_source_parallelism=300), [], 128) == 128


def test_settings_fall_back_as_in_flink() -> None:
    assert AdaptiveBatchSettings.from_config({}) == AdaptiveBatchSettings(True, 1, 128, 16 * MIB, 128)
    with_default = AdaptiveBatchSettings.from_config({"parallelism.default": "2"}, env_parallelism=5)
    assert (with_default.max_parallelism, with_default.default_source_parallelism) == (2, 2)
    local = AdaptiveBatchSettings.from_config({}, env_parallelism=5)  # a local env: its CPU count
    assert (local.max_parallelism, local.default_source_parallelism) == (5, 5)
    explicit = AdaptiveBatchSettings.from_config(
        {
            "parallelism.default": "2",
            "execution.batch.adaptive.auto-parallelism.max-parallelism": "6",
            "jobmanager.adaptive-batch-scheduler.avg-data-volume-per-task": "64kb",
            "execution.batch.adaptive.auto-parallelism.default-source-parallelism": "1",
        }
    )
    assert explicit == AdaptiveBatchSettings(True, 1, 6, 64 << 10, 1)
    disabled = {"execution.batch.adaptive.auto-parallelism.enabled": "false"}
    assert not AdaptiveBatchSettings.from_config(disabled).enabled
    pipelined = {"execution.batch-shuffle-mode": "ALL_EXCHANGES_PIPELINED"}
    assert not AdaptiveBatchSettings.from_config(pipelined).enabled
    with pytest.raises(ConfigurationError, match="must not be smaller"):
        AdaptiveBatchSettings.from_config({"jobmanager.adaptive-batch-scheduler.min-parallelism": "200"})


def test_a_consumer_reads_its_key_group_range_of_the_subpartitions() -> None:
    ranges = [consumed_subpartitions(8, 3, i) for i in range(3)]
    assert [list(r) for r in ranges] == [[0, 1, 2], [3, 4, 5], [6, 7]]
    assert [list(consumed_subpartitions(8, 3, i, broadcast=True)) for i in range(3)] == [[0], [1], [2]]


# -- the plan ------------------------------------------------------------------------------------


def _vertex(name: str, p: int, kind: str = "map", configured: bool = False, max_p: int = 128) -> JobVertex:
    op = OperatorDescriptor(new_id(), name, kind, function="f")
    return JobVertex(new_id(), name, p, max_p, [op], parallelism_configured=configured,
                     max_parallelism_configured=False)  # fmt: skip


def _edge(a: JobVertex, b: JobVertex, kind: str = "hash") -> JobEdge:
    return JobEdge(new_id(), a.id, b.id, PartitionerDescriptor(kind, "k" if kind == "hash" else None))  # type: ignore[arg-type]


def _graph(vertices: list[JobVertex], edges: list[JobEdge]) -> JobGraph:
    return JobGraph(new_id(), "adaptive", vertices, edges, user_artifacts={"f": b"x", "k": b"y"})


def test_configured_vertices_keep_their_parallelism_the_others_wait() -> None:
    src = _vertex("src", 4, "source")
    keyed = _vertex("keyed", 4)
    fixed = _vertex("fixed", 3, configured=True)
    plan = AdaptiveBatchPlan(_graph([src, keyed, fixed], [_edge(src, keyed), _edge(keyed, fixed)]), SETTINGS)
    assert plan.parallelism == {src.id: 8, keyed.id: -1, fixed.id: 3}
    assert plan.job_graph.vertex(keyed.id).parallelism == -1
    assert plan.job_graph.vertex(keyed.id).max_parallelism == 8  # the adaptive max: its key groups
    assert plan.job_graph.vertex(fixed.id).max_parallelism == 128
    assert plan.num_subpartitions(plan.job_graph.edges[0]) == 8  # consumer not known yet: one per key group
    assert plan.num_subpartitions(plan.job_graph.edges[1]) == 3  # a configured consumer: one per subtask
    assert plan.decide(keyed.id, [ConsumedResult(40 * MIB, 8)]) == [keyed.id]
    assert plan.job_graph.vertex(keyed.id).parallelism == 3
    assert [list(plan.input_subpartitions(plan.job_graph.edges[0], i)) for i in range(3)] == [
        [0, 1, 2], [3, 4, 5], [6, 7],
    ]  # fmt: skip
    assert list(plan.input_subpartitions(plan.job_graph.edges[1], 2)) == [2]


def test_forward_groups_share_one_parallelism() -> None:
    src = _vertex("src", 2, "source")
    a = _vertex("a", 2)
    b = _vertex("b", 2)
    plan = AdaptiveBatchPlan(_graph([src, a, b], [_edge(src, a), _edge(a, b, "forward")]), SETTINGS)
    assert plan.decide(a.id, [ConsumedResult(20 * MIB, 8)]) == [a.id, b.id]
    assert plan.parallelism[b.id] == 2
    assert plan.num_subpartitions(plan.job_graph.edges[1]) == 1
    # a configured member fixes the whole group from the start, sources included
    src2 = _vertex("src", 2, "source")
    c = _vertex("c", 5, configured=True)
    plan = AdaptiveBatchPlan(_graph([src2, c], [_edge(src2, c, "forward")]), SETTINGS)
    assert plan.parallelism == {src2.id: 5, c.id: 5}


def test_configured_max_parallelism_bounds_the_decision() -> None:
    src = _vertex("src", 2, "source")
    keyed = JobVertex(new_id(), "keyed", 2, 4, [OperatorDescriptor(new_id(), "k", "reduce", function="f")],
                      parallelism_configured=False, max_parallelism_configured=True)  # fmt: skip
    plan = AdaptiveBatchPlan(_graph([src, keyed], [_edge(src, keyed)]), SETTINGS)
    assert plan.upper_bound(keyed.id) == 4
    plan.decide(keyed.id, [ConsumedResult(1000 * MIB, 4)])
    assert plan.parallelism[keyed.id] == 4


# -- staged scheduling ---------------------------------------------------------------------------


def _finish(eg: ExecutionGraph, vertex_id: str, num_bytes: int, now: int) -> list:
    actions: list = []
    for ex in eg.by_vertex[vertex_id]:
        for state in (ExecutionState.INITIALIZING, ExecutionState.RUNNING):
            eg.handle(TaskStateChanged(ex.execution_id, state), now)
        out = {e.id: num_bytes for e in eg.job_graph.outputs_of(vertex_id)}
        finished = TaskStateChanged(ex.execution_id, ExecutionState.FINISHED, result_bytes=out)
        actions += eg.handle(finished, now)
    return actions


def test_consumers_are_decided_and_deployed_once_their_producers_finished() -> None:
    src = _vertex("src", 2, "source")
    keyed = _vertex("keyed", 2)
    graph = _graph([src, keyed], [_edge(src, keyed)])
    settings = AdaptiveBatchSettings(
        max_parallelism=4, default_source_parallelism=2, avg_data_volume_per_task=MIB
    )
    eg = ExecutionGraph(graph, 0, adaptive=AdaptiveBatchPlan(graph, settings))
    assert eg.handle(StartScheduling(), 1)[-1] == RequestSlots(2)  # the sources' slots only
    assert eg.by_vertex[keyed.id] == []
    for n in range(2):  # a subtask goes as soon as its slot is there
        [deploy] = eg.handle(SlotAssigned(n, f"te-{n}", f"a{n}"), 2)
        assert isinstance(deploy, DeployTasks) and len(deploy.execution_ids) == 1
    written = {graph.edges[0].id: 3 * MIB // 2}
    first, second = eg.by_vertex[src.id]
    for ex in (first, second):
        for state in (ExecutionState.INITIALIZING, ExecutionState.RUNNING):
            assert eg.handle(TaskStateChanged(ex.execution_id, state), 4) == []
    done = ExecutionState.FINISHED
    assert eg.handle(TaskStateChanged(first.execution_id, done, result_bytes=written), 5) == []
    # the last producer finishes: 2 x 1.5 MiB → 3 subtasks, one more slot, two deploy at once
    actions = eg.handle(TaskStateChanged(second.execution_id, done, result_bytes=written), 6)
    assert eg.job_graph.vertex(keyed.id).parallelism == 3
    assert actions[0] == RequestSlots(1)
    assert isinstance(actions[1], DeployTasks) and len(actions[1].execution_ids) == 2
    [late] = eg.handle(SlotAssigned(2, "te-2", "a2"), 7)
    assert isinstance(late, DeployTasks) and len(late.execution_ids) == 1
    # each consumer subtask reads its range of the producers' 4 subpartitions (4 = the vertex's max)
    tdd = build_deployment(eg, eg.by_vertex[keyed.id][0], {"te-0": "h:0", "te-1": "h:1", "te-2": "h:2"})
    assert [c.subpartition_index for c in tdd.input_gates[0].channels] == [0, 1, 0, 1]
    producer_tdd = build_deployment(eg, first, {"te-0": "h:0", "te-1": "h:1"})
    [output] = producer_tdd.output_partitions
    assert output.blocking and output.num_subpartitions == 4
    assert eg.status is JobStatus.RUNNING
    _finish(eg, keyed.id, 0, 8)
    assert eg.status is JobStatus.FINISHED


def test_a_lost_task_executor_holding_unread_results_restarts_the_whole_job() -> None:
    from flott.runtime.executiongraph.failover.restart_backoff_time_strategy import create_restart_strategy

    src = _vertex("src", 1, "source")
    slow = msgspec.structs.replace(_vertex("slow", 1, "source"), slot_sharing_group="other")
    join = _vertex("join", 1)
    graph = _graph([src, slow, join], [_edge(src, join), _edge(slow, join)])
    settings = AdaptiveBatchSettings(max_parallelism=1, default_source_parallelism=1)
    policy = create_restart_strategy({"restart-strategy.type": "fixed-delay"}, checkpointing_enabled=False)
    eg = ExecutionGraph(graph, 0, adaptive=AdaptiveBatchPlan(graph, settings), restart_policy=policy)
    eg.handle(StartScheduling(), 1)
    eg.handle(SlotAssigned(0, "te-0", "a0"), 2)
    eg.handle(SlotAssigned(1, "te-1", "a1"), 2)
    _finish(eg, src.id, 10, 3)
    assert eg.by_vertex[join.id] == []  # the other producer still runs
    eg.handle(TaskExecutorLost("te-0", "killed"), 4)
    assert eg.status is JobStatus.RESTARTING
    [cancel_slow] = [a for a in eg.handle(TaskStateChanged(eg.by_vertex[slow.id][0].execution_id,
                                                             ExecutionState.CANCELED), 5)]  # fmt: skip
    assert isinstance(cancel_slow, ScheduleRestart)
    finished_src = eg.by_vertex[src.id][0]
    actions = eg.handle(RestartJob(), 6)
    # the failed attempt's finished results are dropped; the sources of attempt 1 go again
    assert actions[0] == ReleasePartitions("te-0", [f"{graph.job_id}.{graph.edges[0].id}.0.0"])
    assert finished_src.execution_id not in eg.executions
    assert [a for a in actions if isinstance(a, DeployTasks)] == [
        DeployTasks([eg.by_vertex[slow.id][0].execution_id])
    ]  # te-0's slot is gone: src waits for a new one, slow runs again on te-1
    assert RequestSlots(1) in actions
