"""The pure checks behind admission control and storage confinement, without a cluster."""

from __future__ import annotations

import msgspec
import pytest

from flott.configuration import Configuration
from flott.errors import JobAdmissionError
from flott.runtime.checkpoint.errors import IllegalStoragePathError
from flott.runtime.checkpoint.storage import StoragePathPolicy, canonical_location, is_under
from flott.runtime.dispatcher.admission import AdmissionLimits, check_cluster_limits, check_graph_size
from flott.runtime.gateways.resource_manager_gateway import SlotCapacity, slot_capacity
from flott.runtime.jobgraph import JobGraph
from tests.rest.jobs import bounded_job

LIMITS = AdmissionLimits.from_config(Configuration())


def test_storage_path_policy() -> None:
    policy = StoragePathPolicy.from_config({"state.savepoints.dir": "s3://bucket/sp"})
    assert policy.schemes == {"file", "s3"}  # the configured directory's scheme is the operator's
    for ok in ("/abs/dir", "file:///abs/dir", "s3://bucket/other"):
        assert policy.check(ok, "x") == ok
    for bad in ("http://h/x", "HTTPS://h/x", "gs://b/x", "relative", "file://relative", "./x",
                "memory::s3://b/x", "/a\x00b", "data:text/plain,hi"):  # fmt: skip
        with pytest.raises(IllegalStoragePathError):
            policy.check(bad, "x")
    opened = StoragePathPolicy.from_config({"flott.storage.allowed-schemes": "gs, http"})
    assert opened.schemes == {"file", "gs", "http"}


def test_confinement_compares_locations_not_strings() -> None:
    roots = ["/data/savepoints", "s3://b/sp"]
    assert is_under("/data/savepoints/savepoint-1", roots)
    assert is_under("file:///data/savepoints/x/", roots)
    assert is_under("s3://b/sp/savepoint-2", roots)
    assert not is_under("/data/savepoints", roots)  # the location itself is not a savepoint
    assert not is_under("/data/savepoints/../etc", roots)
    assert not is_under("/data/savepoints-evil/x", roots)
    assert not is_under("s3://b/sp/../../x", roots)
    assert canonical_location("file:///a//b/") == "/a/b"


def test_graph_limits_and_slots() -> None:
    graph = bounded_job("p")
    wide = msgspec.structs.replace(
        graph, vertices=[msgspec.structs.replace(v, parallelism=4) for v in graph.vertices]
    )
    fixed = SlotCapacity(total_slots=2, free_slots=2, task_executors=2, can_grow=False)
    growing = SlotCapacity(total_slots=2, free_slots=2, task_executors=2, can_grow=True)
    check_graph_size(wide, LIMITS)
    with pytest.raises(JobAdmissionError, match="needs 4 task slots"):
        check_cluster_limits(wide, LIMITS, 0, fixed)
    check_cluster_limits(wide, LIMITS, 0, growing)  # application mode starts TaskManagers
    with pytest.raises(JobAdmissionError, match="only 3 are available"):
        check_cluster_limits(wide, LIMITS, 0, msgspec.structs.replace(fixed, free_slots=1), slots_released=2)
    with pytest.raises(JobAdmissionError, match=r"flott\.admission\.max-subtasks"):
        check_cluster_limits(wide, LIMITS, LIMITS.max_subtasks - 3, growing)
    lax = AdmissionLimits.from_config(Configuration({"flott.admission.refuse-unschedulable": "false"}))
    check_cluster_limits(wide, lax, 0, fixed)  # waits for slots, as Flink does


def widened(parallelism: int) -> JobGraph:
    graph = bounded_job("p")
    return msgspec.structs.replace(
        graph, vertices=[msgspec.structs.replace(v, parallelism=parallelism) for v in graph.vertices]
    )


def test_taskmanagers_the_cluster_started_count_before_they_register() -> None:
    """An HA application cluster started with -p 2 runs two one-slot TaskManagers of its own; its
    program may submit while only one has registered: the job is judged against both."""
    one_of_two = slot_capacity({"tm-1": 1}, ["tm-1", "tm-2"], 1, free_slots=1, can_grow=False)
    assert one_of_two.total_slots == 2
    assert (one_of_two.task_executors, one_of_two.task_executors_starting) == (1, 1)
    check_cluster_limits(widened(2), LIMITS, 0, one_of_two)
    # one the cluster did not start (a standalone TaskManager) counts once it registered
    mixed = slot_capacity({"tm-1": 1, "standalone": 4}, ["tm-1", "tm-2"], 1, free_slots=5, can_grow=False)
    assert (mixed.total_slots, mixed.task_executors, mixed.task_executors_starting) == (6, 2, 1)
    # a cluster that truly can never have enough slots is still refused at once, saying what it has
    expected = (
        r"needs 4 task slots but this cluster has 2 \(2 TaskManager\(s\), 1 of them starting\) "
        "and does not start TaskManagers on demand"
    )
    with pytest.raises(JobAdmissionError, match=expected):
        check_cluster_limits(widened(4), LIMITS, 0, one_of_two)
    # all registered: the message is as before
    both = slot_capacity({"tm-1": 1, "tm-2": 1}, ["tm-1", "tm-2"], 1, free_slots=2, can_grow=False)
    with pytest.raises(JobAdmissionError, match=r"has 2 \(2 TaskManager\(s\)\) and does not"):
        check_cluster_limits(widened(4), LIMITS, 0, both)
    # none registered yet (a standalone cluster whose TaskManagers are still starting): it waits
    check_cluster_limits(widened(4), LIMITS, 0, slot_capacity({}, ["tm-1"], 1, free_slots=0, can_grow=False))
